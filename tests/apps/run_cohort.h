// `cohort <args>` run in-process for the program's tests: the exit code and what it wrote to stderr.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "app/cli.h"

namespace cohort::testing {

inline std::pair<int, std::string> run_cohort(std::vector<std::string> args) {
  args.insert(args.begin(), "cohort");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStderr();
  int code = cohort::app::run_cli(static_cast<int>(argv.size()), argv.data());
  return {code, ::testing::internal::GetCapturedStderr()};
}

}  // namespace cohort::testing
