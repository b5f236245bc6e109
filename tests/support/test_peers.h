// The Python of the tests' PyPI peers (onnxruntime, tensorboard), from the venv that
// scripts/test_peers_venv.sh finds or makes.
#pragma once

#include <string>
#include <utility>

namespace cohort::testing {

// {python, ""} when the peers are there, or {"", why not}. Asked once per process: the script installs
// on the first call (PyPI), later calls only find it.
const std::pair<std::string, std::string>& test_peers_python();

}  // namespace cohort::testing
