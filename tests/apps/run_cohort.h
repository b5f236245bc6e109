// `cohort <args>` run in-process for the program's tests (the exit code and what it wrote to stderr),
// or as a child process.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "app/cli.h"
#include "support/paths.h"
#include "support/subprocess.h"

namespace cohort::testing {

// The whole content of a file ("" when it cannot be read).
inline std::string text_of(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A path of its own for one test of a suite, <tmp>/cohort-<suite>-test-<pid>/<name>, emptied (its
// parent exists; the path itself does not).
inline std::filesystem::path fresh_test_dir(const std::string& suite, const std::string& name) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("cohort-" + suite + "-test-" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir.parent_path());
  return dir;
}

inline std::pair<int, std::string> run_cohort(std::vector<std::string> args) {
  args.insert(args.begin(), "cohort");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStderr();
  int code = cohort::app::run_cli(static_cast<int>(argv.size()), argv.data());
  return {code, ::testing::internal::GetCapturedStderr()};
}

// The cohort program (not in-process) with `args`, as spawn_process.
inline pid_t spawn_cohort(std::vector<std::string> args, const std::filesystem::path& log) {
  args.insert(args.begin(), cohort::testing::cohort_binary());
  return spawn_process(std::move(args), log);
}

// run_cohort with what it printed on stdout too.
struct Printed {
  int code;
  std::string out, err;
};
inline Printed run_printing(const std::vector<std::string>& args) {
  ::testing::internal::CaptureStdout();
  auto [code, err] = run_cohort(args);
  return {code, ::testing::internal::GetCapturedStdout(), err};
}

// Runs `cohort train <args> --out <dir>/run --no-progress` and expects a usage error (exit 2) whose
// message contains `message`.
inline void expect_train_usage_error(const std::filesystem::path& dir, std::vector<std::string> args,
                                     const std::string& message) {
  args.insert(args.begin(), "train");
  args.insert(args.end(), {"--out", (dir / "run").string(), "--no-progress"});
  auto [code, err] = run_cohort(args);
  EXPECT_EQ(code, 2) << err;
  EXPECT_NE(err.find(message), std::string::npos) << "expected \"" << message << "\" in: " << err;
}

}  // namespace cohort::testing
