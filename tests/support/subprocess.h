// Runs a program as a child process, for tests of the cohort binary: its output captured in files,
// a time limit so that a hang fails the test instead of the suite.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace cohort::testing {

struct Finished {
  int exit_code = -1;   // 128 + signal when killed by one; -1 when it ran out of time (then killed)
  std::string out, err;  // what it printed
};

// Runs argv[0] with the arguments that follow (execv: give a path), stdout and stderr in
// `dir`/<name>.out and .err, and waits up to `limit`.
Finished run_process(const std::vector<std::string>& argv, const std::filesystem::path& dir, const std::string& name,
                     std::chrono::seconds limit = std::chrono::seconds(300));

// Starts argv[0] (execv: give a path) with the arguments that follow, stdout and stderr in `log`
// (its directory is created), and returns at once with the child's pid, for a test that signals the
// child and waits for it itself.
pid_t spawn_process(const std::vector<std::string>& argv, const std::filesystem::path& log);

}  // namespace cohort::testing
