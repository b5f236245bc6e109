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

// Note [Rendezvous generations] in gloo.cpp: what a rendezvous that ended badly leaves in the store
// does not stop the next attempt with the same store and run id.
namespace {

std::string fresh_store() {
  char tmpl[] = "/tmp/cohort-rendezvous-retry-XXXXXX";
  return ::mkdtemp(tmpl);
}

size_t files_in(const std::filesystem::path& dir) {
  size_t n = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) n += entry.is_regular_file();
  return n;
}

}  // namespace

TEST(DistributedRetry, AfterARendezvousThatFailedTheNextAttemptMeets) {
  const std::string dir = fresh_store();
  // Rank 0 of 2 alone: it fails at its timeout and leaves its keys (rank 1 could have been reading them).
  auto alone = run_ranks(1, "collectives", {{"COHORT_STORE", "file:" + dir}, {"WORLD_SIZE", "2"},
                                            {"COHORT_TEST_TIMEOUT_MS", "300"}});
  EXPECT_EQ(alone.ranks[0].exit_code, 1) << alone.report();
  EXPECT_THAT(alone.ranks[0].output, HasSubstr("rank 1 never arrived")) << alone.report();
  ASSERT_GT(files_in(dir), 0u);
  auto retry = run_ranks(2, "collectives", {{"COHORT_STORE", "file:" + dir}});
  EXPECT_TRUE(retry.all_ok()) << retry.report();
  std::filesystem::remove_all(dir);
}

TEST(DistributedRetry, AfterRanksKilledInTheirRendezvousTheNextAttemptMeets) {
  const std::string dir = fresh_store();
  // Ranks 0 and 1 of 3 wait for rank 2 and are killed (SIGKILL at the deadline): their keys, addresses
  // of processes that are gone, stay in the store.
  auto killed = run_ranks(2, "collectives", {{"COHORT_STORE", "file:" + dir}, {"WORLD_SIZE", "3"}}, {},
                          std::chrono::seconds(3));
  EXPECT_TRUE(killed.ranks[0].timed_out && killed.ranks[1].timed_out) << killed.report();
  ASSERT_GE(files_in(dir), 4u) << "each rank's process key and address";
  auto retry = run_ranks(3, "collectives", {{"COHORT_STORE", "file:" + dir}});
  EXPECT_TRUE(retry.all_ok()) << retry.report();
  // And the attempt after that, with the store as the retry left it.
  auto again = run_ranks(3, "collectives", {{"COHORT_STORE", "file:" + dir}});
  EXPECT_TRUE(again.all_ok()) << again.report();
  std::filesystem::remove_all(dir);
}

// Processes that claim the same rank on one host, started together: one holds it, every other is told,
// none is sent to another generation. (The claim is atomic: checked, then written, two would both hold
// it.) The holder waits its whole timeout, which only has to outlast the others' start, even on a
// loaded machine.
TEST(DistributedRetry, ProcessesWithOneRankAreAnError) {
  const std::string dir = fresh_store();
  const int processes = 4;
  auto run = run_ranks(processes, "collectives", {{"COHORT_STORE", "file:" + dir}, {"WORLD_SIZE", "3"},
                                                  {"RANK", "1"}, {"COHORT_TEST_TIMEOUT_MS", "10000"}});
  int taken = 0;
  for (const auto& r : run.ranks) taken += r.output.find("rank 1 of 3") != std::string::npos &&
                                           r.output.find("is taken: process") != std::string::npos;
  EXPECT_EQ(taken, processes - 1) << run.report();
  std::filesystem::remove_all(dir);
}
