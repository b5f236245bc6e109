// `cohort train --profile FIRST:LAST`: the Chrome trace and the table of the steps asked, checked by a
// reader of its own (Python's json: the nesting, the phases, self times adding up to each step), on
// one device and under DataParallel; a window past the run's end; the flag's errors; and that it is
// not part of the run's settings.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "apps/run_cohort.h"
#include "support/paths.h"
#include "support/subprocess.h"

namespace fs = std::filesystem;
using cohort::testing::run_cohort;
using ::testing::HasSubstr;

namespace {

// 256 examples in batches of 32: 8 steps an epoch (3 epochs unless the test says otherwise).
std::vector<std::string> flags(const fs::path& out, const std::vector<std::string>& more) {
  std::vector<std::string> f{"train", "--dataset", "synthetic", "--limit", "256", "--batch-size", "32", "--model",
                             "lenet", "--workers", "1", "--threads", "1", "--no-progress", "--out", out.string()};
  f.insert(f.end(), more.begin(), more.end());
  return f;
}

// check_profile.py's verdict on the trace in `run`, which should hold `steps` steps.
void expect_valid_trace(const fs::path& run, int steps) {
  const cohort::testing::Finished check = cohort::testing::run_process(
      {"/usr/bin/python3", cohort::testing::fixtures_dir() + "/check_profile.py", (run / "profile.json").string(),
       std::to_string(steps)},
      run, "check_profile");
  EXPECT_EQ(check.exit_code, 0) << check.err;
  std::cout << check.out;
}

TEST(ProfileFlag, WritesATraceAndATableOfTheStepsAsked) {
  const fs::path out = cohort::testing::fresh_test_dir("profile_flag", "one_device");
  auto [code, err] = run_cohort(flags(out, {"--profile", "3:4"}));
  ASSERT_EQ(code, 0) << err;
  EXPECT_THAT(err, HasSubstr("profile of steps 3-4 in"));
  expect_valid_trace(out, 2);
  const std::string table = cohort::testing::text_of(out / "profile.txt");
  EXPECT_THAT(table, HasSubstr("cohort train: profile of steps 3-4"));
  for (const char* row : {"train_step", "conv2d", "ConvolutionBackward0", "optimizer.step", "dataloader.next"})
    EXPECT_THAT(table, HasSubstr(row));
  // How the run was watched is not what it is: the config line has no trace of the flag.
  const nlohmann::json config = nlohmann::json::parse(cohort::testing::text_of(out / "metrics.jsonl").substr(
      0, cohort::testing::text_of(out / "metrics.jsonl").find('\n')));
  EXPECT_FALSE(config.contains("profile"));
}

TEST(ProfileFlag, ProfilesDataParallelSteps) {
  const fs::path out = cohort::testing::fresh_test_dir("profile_flag", "data_parallel");
  auto [code, err] = run_cohort(flags(out, {"--devices", "2", "--profile", "2"}));
  ASSERT_EQ(code, 0) << err;
  EXPECT_THAT(err, HasSubstr("profile of step 2 in"));
  expect_valid_trace(out, 1);
  // The replicas' threads report too.
  const nlohmann::json trace = nlohmann::json::parse(cohort::testing::text_of(out / "profile.json"));
  std::set<int> threads;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["cat"] == "op") threads.insert(e["tid"].get<int>());
  EXPECT_GE(threads.size(), 2u);
}

TEST(ProfileFlag, AWindowPastTheRunsEndHasTheStepsThatRan) {
  const fs::path out = cohort::testing::fresh_test_dir("profile_flag", "past_the_end");
  auto [code, err] = run_cohort(flags(out, {"--epochs", "1", "--profile", "7:100"}));  // 8 steps
  ASSERT_EQ(code, 0) << err;
  EXPECT_THAT(err, HasSubstr("profile of steps 7-8 in"));
  expect_valid_trace(out, 2);
}

TEST(ProfileFlag, ResumedRunsMayProfile) {
  const fs::path out = cohort::testing::fresh_test_dir("profile_flag", "resume");
  ASSERT_EQ(run_cohort(flags(out, {"--epochs", "1"})).first, 0);  // steps 1-8; the resume runs 9-16
  auto [code, err] = run_cohort({"train", "--resume", out.string(), "--epochs", "2", "--profile", "10:10",
                                 "--no-progress"});
  ASSERT_EQ(code, 0) << err;
  EXPECT_THAT(err, HasSubstr("profile of step 10 in"));
  expect_valid_trace(out, 1);
}

TEST(ProfileFlag, BadWindowsAreUsageErrors) {
  const fs::path dir = cohort::testing::fresh_test_dir("profile_flag", "errors");
  for (const char* bad : {"0:3", "a", "3:", ":4", "2:x", "0"})
    cohort::testing::expect_train_usage_error(dir, {"--dataset", "synthetic", "--profile", bad},
                                              "--profile expects FIRST:LAST");
  cohort::testing::expect_train_usage_error(dir, {"--dataset", "synthetic", "--profile", "5:2"},
                                            "--profile 5:2 ends before it starts");
  EXPECT_FALSE(fs::exists(dir / "run"));  // refused before any work
}

}  // namespace
