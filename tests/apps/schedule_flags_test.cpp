// `cohort train --warmup-steps N` and `--scheduler plateau / cosine-restarts` end to end: the step
// records' rates follow the schedule (its values are checked against PyTorch in schedule_test.cpp), a
// run resumed inside the warm-up or mid-period is bit for bit the one never stopped, the flags are in
// the run's config, and bad values are usage errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "apps/run_cohort.h"
#include "apps/same_run.h"
#include "support/run_metrics.h"

namespace fs = std::filesystem;
using cohort::testing::run_cohort;

namespace {

// 256 synthetic images in batches of 32: 8 steps an epoch.
std::vector<std::string> flags(const fs::path& out, const std::vector<std::string>& more) {
  std::vector<std::string> f{"train", "--dataset", "synthetic", "--limit", "256", "--batch-size", "32", "--model",
                             "lenet", "--workers", "1", "--threads", "1", "--log-every", "1", "--epochs", "3",
                             "--lr", "0.05", "--no-progress", "--out", out.string()};
  f.insert(f.end(), more.begin(), more.end());
  return f;
}

fs::path dir(const std::string& name) { return cohort::testing::fresh_test_dir("schedule_flags", name); }

std::vector<double> step_rates(const fs::path& run) {
  std::vector<double> lrs;
  for (const auto& r : cohort::testing::metrics_of(run))
    if (r["kind"] == "step") lrs.push_back(r["lr"]);
  return lrs;
}

TEST(ScheduleFlags, TheWarmUpRaisesTheRateLinearlyThenTheSchedulerTakesOver) {
  const fs::path run = dir("warmup_cosine_restarts");
  auto [code, err] = run_cohort(flags(run, {"--warmup-steps", "4", "--scheduler", "cosine-restarts"}));
  ASSERT_EQ(code, 0) << err;
  const std::vector<double> lrs = step_rates(run);  // a step record holds the rate of the step after it
  ASSERT_EQ(lrs.size(), 24u);
  // After step k (1..3) the next step runs at (k + 1) / 4 of the period's rate, cos(pi k / 8) down.
  for (int k = 1; k <= 3; ++k)
    EXPECT_NEAR(lrs[k - 1], 0.05 * (1 + std::cos(M_PI * k / 8)) / 2 * (k + 1) / 4, 1e-12) << "after step " << k;
  EXPECT_NEAR(lrs[7], 0.05, 1e-12);   // the second period starts at the full rate
  EXPECT_NEAR(lrs[23], 0.05, 1e-12);  // and the third, after 8 + 16 steps
  const auto config = cohort::testing::text_of(run / "metrics.jsonl");
  EXPECT_THAT(config, ::testing::HasSubstr("\"warmup_steps\":4"));
  EXPECT_THAT(config, ::testing::HasSubstr("\"scheduler\":\"cosine-restarts\""));
}

TEST(ScheduleFlags, PlateauCutsTheRateWhenTheTestLossStalls) {
  // A rate too small to change the test loss by the 1e-4 that counts as better: it stalls from the
  // first epoch, and after three epochs without improvement (patience 2) the rate is cut tenfold. (Not
  // smaller: a cut of less than 1e-8 is skipped, as PyTorch's eps says.)
  const fs::path run = dir("plateau");
  auto [code, err] = run_cohort(flags(run, {"--scheduler", "plateau", "--lr", "1e-6", "--epochs", "5"}));
  ASSERT_EQ(code, 0) << err;
  std::vector<double> epoch_lrs;
  for (const auto& r : cohort::testing::metrics_of(run))
    if (r["kind"] == "epoch") epoch_lrs.push_back(r["lr"]);
  ASSERT_EQ(epoch_lrs.size(), 5u);
  EXPECT_DOUBLE_EQ(epoch_lrs[3], 1e-6);
  EXPECT_NEAR(epoch_lrs[4], 1e-7, 1e-20);  // epochs 2, 3 and 4 were no better than epoch 1
}

TEST(ScheduleFlags, ResumedInsideTheWarmUpOrMidPeriodTheRunIsTheOneNeverStopped) {
  for (const std::string scheduler : {"cosine-restarts", "plateau"}) {
    const std::vector<std::string> more{"--warmup-steps", "12", "--scheduler", scheduler, "--checkpoint-every", "3",
                                        "--keep-checkpoints", "99"};
    const fs::path whole = dir("whole_" + scheduler);
    ASSERT_EQ(run_cohort(flags(whole, more)).first, 0);
    // Step 3 is inside the first epoch's warm-up; step 9 in the second epoch, still warming up.
    for (const std::string step : {"3", "9"}) {
      const fs::path split = dir("split_" + scheduler + "_" + step);
      ASSERT_EQ(run_cohort(flags(split, more)).first, 0);
      const fs::path checkpoint = split / "checkpoints" / ("step-0000000" + step + ".safetensors");
      auto [code, err] = run_cohort({"train", "--resume", checkpoint.string(), "--threads", "1", "--no-progress"});
      ASSERT_EQ(code, 0) << err;
      SCOPED_TRACE(scheduler + " resumed at step " + step);
      cohort::testing::expect_identical_checkpoints(whole, split);
      EXPECT_EQ(step_rates(whole), step_rates(split));
    }
  }
}

TEST(ScheduleFlags, BadValuesAreUsageErrors) {
  const fs::path d = dir("errors");
  cohort::testing::expect_train_usage_error(d, {"--dataset", "synthetic", "--warmup-steps", "-1"},
                                            "cohort train: --warmup-steps must be at least 0");
  cohort::testing::expect_train_usage_error(d, {"--dataset", "synthetic", "--warmup-steps", "10", "--scheduler",
                                                "onecycle"},
                                            "cohort train: --warmup-steps does not combine with --scheduler onecycle");
  cohort::testing::expect_train_usage_error(d, {"--dataset", "synthetic", "--scheduler", "plateaus"},
                                            "cohort train: --scheduler 'plateaus' is not known; choose one of none, "
                                            "step, cosine, onecycle, plateau, cosine-restarts");
}

}  // namespace
