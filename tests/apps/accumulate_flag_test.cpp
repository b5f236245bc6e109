// `cohort train --accumulate K` (Note [Gradient accumulation] in trainer.cpp): K micro-batches of b
// give the run of batches of K x b (the epoch's short last window and micro-batch included), on one
// device, under DataParallel and across two processes (no_sync on the first K - 1); a run resumed
// mid-epoch is bit for bit the one never stopped; bad values are usage errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "apps/run_cohort.h"
#include "apps/same_run.h"
#include "support/paths.h"
#include "support/run_metrics.h"
#include "support/subprocess.h"


namespace fs = std::filesystem;
using cohort::testing::run_cohort;

namespace {

// 250 synthetic images: in micro-batches of 16, 16 batches (the last of 10 images).
std::vector<std::string> flags(const fs::path& out, const std::vector<std::string>& more) {
  std::vector<std::string> f{"train", "--dataset", "synthetic", "--limit", "250", "--model", "lenet", "--workers", "1",
                             "--threads", "1", "--log-every", "1", "--epochs", "2", "--lr", "0.05", "--no-progress",
                             "--out", out.string()};
  f.insert(f.end(), more.begin(), more.end());
  return f;
}

fs::path dir(const std::string& name) { return cohort::testing::fresh_test_dir("accumulate_flag", name); }

void train(const fs::path& out, const std::vector<std::string>& more) {
  auto [code, err] = run_cohort(flags(out, more));
  ASSERT_EQ(code, 0) << err;
}

TEST(AccumulateFlag, MicroBatchesGiveTheRunOfTheirConcatenation) {
  // 2 x 16 against 32: windows of two full micro-batches, the last of 16 + 10 images.
  const fs::path whole = dir("batch32"), accumulated = dir("accumulate2");
  train(whole, {"--batch-size", "32"});
  train(accumulated, {"--batch-size", "16", "--accumulate", "2"});
  cohort::testing::expect_same_run(whole, accumulated, 250);
  EXPECT_EQ(cohort::testing::metrics_of(accumulated).size(), 2u * 8u + 2u);  // 8 steps and an epoch record, twice
  // 3 x 16 against 48: the epoch's last window is one micro-batch of 10 images.
  const fs::path whole48 = dir("batch48"), accumulated3 = dir("accumulate3");
  train(whole48, {"--batch-size", "48"});
  train(accumulated3, {"--batch-size", "16", "--accumulate", "3"});
  cohort::testing::expect_same_run(whole48, accumulated3, 250);
}

TEST(AccumulateFlag, DataParallelAccumulatesAsOneDeviceDoes) {
  const fs::path one = dir("one_device"), two = dir("two_devices");
  train(one, {"--batch-size", "16", "--accumulate", "2"});
  train(two, {"--batch-size", "16", "--accumulate", "2", "--devices", "2"});
  cohort::testing::expect_same_run(one, two, 250);
}

TEST(AccumulateFlag, TwoProcessesAccumulateAsOneDoes) {
  const fs::path one = dir("one_process"), two = dir("two_processes");
  train(one, {"--batch-size", "16", "--accumulate", "2"});
  std::vector<std::string> argv{cohort::testing::cohort_binary(), "launch", "--nproc-per-node", "2", "--",
                                cohort::testing::cohort_binary()};
  for (const std::string& f : flags(two, {"--batch-size", "16", "--accumulate", "2", "--workers", "0"}))
    argv.push_back(f);
  const cohort::testing::Finished launched = cohort::testing::run_process(argv, dir("logs"), "two");
  ASSERT_EQ(launched.exit_code, 0) << launched.err;
  cohort::testing::expect_same_run(one, two, 250);
}

TEST(AccumulateFlag, AResumeMidEpochIsTheRunThatWasNotStopped) {
  const fs::path whole = dir("whole"), split = dir("split");
  const std::vector<std::string> more{"--batch-size", "16", "--accumulate", "3", "--checkpoint-every", "4",
                                      "--keep-checkpoints", "99"};
  train(whole, more);
  train(split, more);
  // From step 4 (batch 12 of 16, mid-epoch) of the finished run: the steps after it run again.
  const fs::path step4 = split / "checkpoints" / "step-00000004.safetensors";
  ASSERT_TRUE(fs::exists(step4));
  auto [code, err] = run_cohort({"train", "--resume", step4.string(), "--threads", "1", "--no-progress"});
  ASSERT_EQ(code, 0) << err;
  cohort::testing::expect_identical_checkpoints(whole, split);
  EXPECT_EQ(cohort::testing::metrics_of(whole).size(), cohort::testing::metrics_of(split).size());
}

TEST(AccumulateFlag, BadCountsAreUsageErrors) {
  const fs::path d = dir("errors");
  for (const char* bad : {"0", "-2"})
    cohort::testing::expect_train_usage_error(d, {"--dataset", "synthetic", "--accumulate", bad},
                                              "cohort train: --accumulate must be at least 1 (micro-batches per step)");
}

}  // namespace
