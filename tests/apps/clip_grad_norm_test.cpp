// `cohort train --clip-grad-norm X`: a threshold no gradient reaches changes nothing (the same run, bit
// for bit), a small one changes the run and logs the norms it clipped, a resumed run equals the run
// that was not stopped, DataParallel clips as one device does, and bad values are usage errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/run_cohort.h"
#include "apps/same_run.h"
#include "support/run_metrics.h"

namespace fs = std::filesystem;
using cohort::testing::run_cohort;

namespace {

// 256 examples in batches of 32: 8 steps an epoch; a "step" record every step.
std::vector<std::string> flags(const fs::path& out, const std::vector<std::string>& more) {
  std::vector<std::string> f{"train", "--dataset", "synthetic", "--limit", "256", "--batch-size", "32", "--model",
                             "lenet", "--workers", "1", "--threads", "1", "--log-every", "1", "--epochs", "2",
                             "--lr", "0.05", "--no-progress", "--out", out.string()};
  f.insert(f.end(), more.begin(), more.end());
  return f;
}

std::vector<nlohmann::json> records(const fs::path& run, const std::string& kind) {
  std::vector<nlohmann::json> out;
  std::istringstream lines(cohort::testing::text_of(run / "metrics.jsonl"));
  for (std::string line; std::getline(lines, line);) {
    nlohmann::json r = nlohmann::json::parse(line);
    if (r["kind"] == kind) out.push_back(r);
  }
  return out;
}

TEST(ClipGradNorm, AThresholdNoGradientReachesChangesNothing) {
  const fs::path plain = cohort::testing::fresh_test_dir("clip_grad_norm", "plain");
  const fs::path loose = cohort::testing::fresh_test_dir("clip_grad_norm", "loose");
  ASSERT_EQ(run_cohort(flags(plain, {})).first, 0);
  auto [code, err] = run_cohort(flags(loose, {"--clip-grad-norm", "1e9"}));
  ASSERT_EQ(code, 0) << err;
  const auto a = records(plain, "step"), b = records(loose, "step");
  ASSERT_EQ(a.size(), 16u);
  ASSERT_EQ(b.size(), 16u);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i]["loss"], b[i]["loss"]) << "step " << i + 1;
    EXPECT_FALSE(a[i].contains("grad_norm"));
    EXPECT_GT(b[i]["grad_norm"].get<double>(), 0) << "step " << i + 1;
  }
}

TEST(ClipGradNorm, ASmallThresholdClipsAndLogsTheNormsBefore) {
  const fs::path plain = cohort::testing::fresh_test_dir("clip_grad_norm", "plain_small");
  const fs::path tight = cohort::testing::fresh_test_dir("clip_grad_norm", "tight");
  ASSERT_EQ(run_cohort(flags(plain, {})).first, 0);
  auto [code, err] = run_cohort(flags(tight, {"--clip-grad-norm", "0.01"}));
  ASSERT_EQ(code, 0) << err;
  const auto a = records(plain, "step"), b = records(tight, "step");
  ASSERT_EQ(b.size(), 16u);
  EXPECT_EQ(a[0]["loss"], b[0]["loss"]);  // the first loss is before any update
  int clipped = 0;
  for (const auto& r : b) clipped += r["grad_norm"].get<double>() > 0.01;
  EXPECT_EQ(clipped, 16);  // LeNet's gradients here are far above 0.01
  EXPECT_NE(a.back()["loss"], b.back()["loss"]);
  EXPECT_EQ(records(tight, "config").at(0)["clip_grad_norm"], 0.01);
}

TEST(ClipGradNorm, AResumedRunIsTheRunThatWasNotStopped) {
  const fs::path whole = cohort::testing::fresh_test_dir("clip_grad_norm", "whole");
  const fs::path split = cohort::testing::fresh_test_dir("clip_grad_norm", "split");
  ASSERT_EQ(run_cohort(flags(whole, {"--clip-grad-norm", "0.05"})).first, 0);
  std::vector<std::string> first = flags(split, {"--clip-grad-norm", "0.05"});
  first[std::find(first.begin(), first.end(), "--epochs") - first.begin() + 1] = "1";
  ASSERT_EQ(run_cohort(first).first, 0);
  // The same thread count as the first part: a sum's order, and so its last bit, depends on it.
  auto [code, err] =
      run_cohort({"train", "--resume", split.string(), "--epochs", "2", "--threads", "1", "--no-progress"});
  ASSERT_EQ(code, 0) << err;
  cohort::testing::expect_same_run(whole, split, 256);
  const auto a = records(whole, "step"), b = records(split, "step");
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i]["grad_norm"], b[i]["grad_norm"]) << "step " << i + 1;
}

TEST(ClipGradNorm, DataParallelClipsAsOneDeviceDoes) {
  const fs::path one = cohort::testing::fresh_test_dir("clip_grad_norm", "one_device");
  const fs::path two = cohort::testing::fresh_test_dir("clip_grad_norm", "two_devices");
  ASSERT_EQ(run_cohort(flags(one, {"--clip-grad-norm", "0.05"})).first, 0);
  auto [code, err] = run_cohort(flags(two, {"--clip-grad-norm", "0.05", "--devices", "2"}));
  ASSERT_EQ(code, 0) << err;
  cohort::testing::expect_same_run(one, two, 256);
}

TEST(ClipGradNorm, BadThresholdsAreUsageErrors) {
  const fs::path dir = cohort::testing::fresh_test_dir("clip_grad_norm", "errors");
  for (const char* bad : {"-1", "nan", "inf"})
    cohort::testing::expect_train_usage_error(dir, {"--dataset", "synthetic", "--clip-grad-norm", bad},
                                              "cohort train: --clip-grad-norm must be a finite number at least 0");
}

}  // namespace
