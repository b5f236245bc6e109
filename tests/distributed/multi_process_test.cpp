// Several processes on 127.0.0.1, one cohort_ddp_worker per rank (spawn.h): Gloo collectives, DDP against
// single-process training, overlap, no_sync, unused parameters, dead and hung ranks, checkpoints. Each
// scenario's checks live in the worker (ddp_worker.cpp); here, exit codes and the error messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "distributed/spawn.h"

using cohort::testing::run_ranks;
using ::testing::HasSubstr;
using ::testing::Not;

class DistributedRanks : public ::testing::TestWithParam<int> {};

TEST_P(DistributedRanks, Collectives) {
  auto run = run_ranks(GetParam(), "collectives");
  EXPECT_TRUE(run.all_ok()) << run.report();
}

TEST_P(DistributedRanks, DDPTrainingEqualsOneProcessOnTheWholeBatch) {
  auto run = run_ranks(GetParam(), "ddp_train");
  EXPECT_TRUE(run.all_ok()) << run.report();
}

TEST_P(DistributedRanks, DDPOverDataParallelEqualsOneProcess) {
  auto run = run_ranks(GetParam(), "ddp_train_dp");
  EXPECT_TRUE(run.all_ok()) << run.report();
}

TEST_P(DistributedRanks, FirstBucketIsReducedBeforeBackwardEnds) {
  auto run = run_ranks(GetParam(), "overlap");
  EXPECT_TRUE(run.all_ok()) << run.report();
}

TEST_P(DistributedRanks, NoSyncAccumulatesLocallyThenReducesTheSum) {
  auto run = run_ranks(GetParam(), "no_sync");
  EXPECT_TRUE(run.all_ok()) << run.report();
}

TEST_P(DistributedRanks, ValuesRideInTheGradientAllReduce) {
  auto run = run_ranks(GetParam(), "values_with_gradients");
  EXPECT_TRUE(run.all_ok()) << run.report();
}

TEST_P(DistributedRanks, BFloat16CompressionHalvesTheBytesWithinBFloat16Tolerance) {
  auto run = run_ranks(GetParam(), "bf16_compress");
  EXPECT_TRUE(run.all_ok()) << run.report();
}

TEST_P(DistributedRanks, SixteenBitCollectives) {
  auto run = run_ranks(GetParam(), "collectives16");
  EXPECT_TRUE(run.all_ok()) << run.report();
}

TEST_P(DistributedRanks, ParametersUsedOnSomeRanksOnlyAreAnErrorOnEveryRank) {
  const int n = GetParam();
  auto run = run_ranks(n, "unused");
  ASSERT_TRUE(run.all_ok()) << run.report();
  for (int r = 0; r < n; ++r) {
    std::string used = "b.weight on " + std::to_string(n - 1) + " of " + std::to_string(n) + " ranks";
    EXPECT_THAT(run.ranks[r].output, HasSubstr(used)) << run.report();
    EXPECT_THAT(run.ranks[r].output, HasSubstr(r == 0 ? "(not this one, rank 0)" : "(including this one"));
    EXPECT_THAT(run.ranks[r].output, HasSubstr("c.weight on 0 of"));
  }
}

TEST_P(DistributedRanks, FindUnusedParametersAveragesWhatWasUsed) {
  auto run = run_ranks(GetParam(), "unused_allowed");
  EXPECT_TRUE(run.all_ok()) << run.report();
}

TEST_P(DistributedRanks, AKilledRankIsNamedByTheOthers) {
  const int n = GetParam();
  auto run = run_ranks(n, "killed");  // a timeout of 20 s: the error must come from the closed connection
  EXPECT_EQ(run.ranks[n - 1].exit_code, 3);
  for (int r = 0; r < n - 1; ++r) {
    EXPECT_EQ(run.ranks[r].exit_code, 0) << run.report();
    EXPECT_THAT(run.ranks[r].output, HasSubstr("all_reduce: failed on rank " + std::to_string(r))) << run.report();
    EXPECT_THAT(run.ranks[r].output, HasSubstr("peer rank " + std::to_string(n - 1))) << run.report();
    EXPECT_THAT(run.ranks[r].output, Not(HasSubstr("Timed out"))) << run.report();
  }
}

TEST_P(DistributedRanks, AHungRankIsCaughtByTheTimeout) {
  const int n = GetParam();
  std::vector<int> survivors;
  for (int r = 0; r < n - 1; ++r) survivors.push_back(r);
  auto run = run_ranks(n, "hung", {{"COHORT_TEST_TIMEOUT_MS", "1000"}}, survivors);
  EXPECT_TRUE(run.ranks[n - 1].timed_out);
  for (int r : survivors) {
    EXPECT_EQ(run.ranks[r].exit_code, 0) << run.report();
    EXPECT_THAT(run.ranks[r].output, HasSubstr("all_reduce: failed on rank " + std::to_string(r))) << run.report();
    EXPECT_THAT(run.ranks[r].output, HasSubstr("timeout 1000 ms")) << run.report();
  }
}

TEST_P(DistributedRanks, CheckpointOnRank0ResumesOnEveryRank) {
  auto run = run_ranks(GetParam(), "checkpoint");
  EXPECT_TRUE(run.all_ok()) << run.report();
}

TEST_P(DistributedRanks, UnequalBatchCountsAreReportedWithEveryRanksCount) {
  const int n = GetParam();
  auto run = run_ranks(n, "equal_batches");
  ASSERT_TRUE(run.all_ok()) << run.report();
  for (int r = 0; r < n; ++r) EXPECT_THAT(run.ranks[r].output, HasSubstr("rank 0: 5, rank 1: 6")) << run.report();
}

INSTANTIATE_TEST_SUITE_P(Distributed, DistributedRanks, ::testing::Values(2, 3),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });
