// Where the tests find what the build made and the repository holds. Compiled into one file
// (paths.cpp) so that no other test object carries an absolute path: the others then hit the
// compiler cache from any checkout (a fresh clone, a worktree, CI's directory).
#pragma once

#include <string>

namespace cohort::testing {

const std::string& fixtures_dir();   // tests/fixtures of the source tree
const std::string& cohort_binary();  // the `cohort` program; throws in a build without apps
const std::string& ddp_worker();     // one rank of a distributed test (tests/distributed/ddp_worker.cpp)

}  // namespace cohort::testing
