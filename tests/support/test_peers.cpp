// Finding the tests' PyPI peers once per process.
#include "support/test_peers.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "support/paths.h"
#include "support/subprocess.h"

namespace cohort::testing {

const std::pair<std::string, std::string>& test_peers_python() {
  static const std::pair<std::string, std::string> found = [] {
    const std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("cohort_test_peers_venv_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string script = cohort::testing::fixtures_dir() + "/../../scripts/test_peers_venv.sh";
    const Finished f = run_process({"/bin/bash", script}, dir, "venv", std::chrono::seconds(900));
    std::filesystem::remove_all(dir);
    std::string last = f.out;
    while (!last.empty() && last.back() == '\n') last.pop_back();
    last = last.substr(last.rfind('\n') + 1);  // npos + 1 == 0: the whole of a one-line output
    if (f.exit_code == 0 && !last.empty()) return std::make_pair(last, std::string());
    return std::make_pair(std::string(),
                          "scripts/test_peers_venv.sh (exit " + std::to_string(f.exit_code) + "): " + f.err);
  }();
  return found;
}

}  // namespace cohort::testing
