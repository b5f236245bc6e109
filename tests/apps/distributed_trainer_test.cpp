// `cohort launch --nproc-per-node N -- cohort train ...` (Note [Trainer processes]): the metrics and
// weights of one process on the same batches, with DataParallel inside each process too, resume of a
// multi-process run, rank 0 alone logging, and a batch that does not divide among the processes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cohort/io/safetensors.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "support/run_metrics.h"
#include "support/subprocess.h"

#include "app/run_checkpoint.h"

namespace fs = std::filesystem;
using cohort::testing::Finished;
using cohort::testing::run_process;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

fs::path fresh_dir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("cohort-ddp-trainer-test-" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  return dir;
}

std::vector<std::string> train_flags(const fs::path& out, std::vector<std::string> more = {}) {
  std::vector<std::string> flags = {COHORT_BINARY, "train", "--dataset", "synthetic", "--limit", "512",
                                    "--batch-size", "32", "--model", "lenet", "--lr", "0.05", "--workers", "0",
                                    "--threads", "1", "--log-every", "4", "--no-progress", "--out", out.string()};
  flags.insert(flags.end(), more.begin(), more.end());
  return flags;
}

std::vector<std::string> launched(int processes, std::vector<std::string> command) {
  std::vector<std::string> argv = {COHORT_BINARY, "launch", "--nproc-per-node", std::to_string(processes), "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}


void expect_same_run(const fs::path& one, const fs::path& many) {
  cohort::testing::expect_same_metrics(one, many, 2.0 / 512);
  auto x = cohort::io::load_safetensors(cohort::app::list_checkpoints(one).back());
  auto y = cohort::io::load_safetensors(cohort::app::list_checkpoints(many).back());
  for (const auto& item : x) {
    const std::string& name = item.key();
    if (name.rfind("model/", 0) != 0) continue;
    ASSERT_TRUE(y.contains(name)) << name;
    EXPECT_TRUE(cohort::allclose(item.value(), y[name], 1e-4, 1e-5)) << name;
  }
}

TEST(DistributedTrainer, TwoProcessesGiveTheMetricsAndWeightsOfOne) {
  const fs::path dir = fresh_dir("two"), one = dir / "one", two = dir / "two";
  Finished single = run_process(train_flags(one, {"--epochs", "2"}), dir, "one");
  ASSERT_EQ(single.exit_code, 0) << single.err;
  Finished multi = run_process(launched(2, train_flags(two, {"--epochs", "2"})), dir, "two");
  ASSERT_EQ(multi.exit_code, 0) << multi.err << multi.out;
  expect_same_run(one, two);
  // Rank 0 alone prints the epoch lines and writes the run's files.
  EXPECT_THAT(multi.out, HasSubstr("[rank 0] epoch 2/2"));
  EXPECT_THAT(multi.out, Not(HasSubstr("[rank 1] epoch")));
  EXPECT_TRUE(fs::exists(two / "report.html"));
}

TEST(DistributedTrainer, DataParallelInsideEachProcessGivesTheSameRun) {
  const fs::path dir = fresh_dir("dp-inside"), one = dir / "one", four = dir / "four";
  ASSERT_EQ(run_process(train_flags(one, {"--epochs", "1"}), dir, "one").exit_code, 0);
  Finished multi =
      run_process(launched(2, train_flags(four, {"--epochs", "1", "--devices", "cpu:0,cpu:1"})), dir, "four");
  ASSERT_EQ(multi.exit_code, 0) << multi.err << multi.out;
  expect_same_run(one, four);
}

TEST(DistributedTrainer, AMultiProcessRunResumesFromRankZerosCheckpoint) {
  const fs::path dir = fresh_dir("resume"), whole = dir / "whole", split = dir / "split";
  ASSERT_EQ(run_process(train_flags(whole, {"--epochs", "2"}), dir, "whole").exit_code, 0);
  Finished first = run_process(launched(2, train_flags(split, {"--epochs", "1"})), dir, "first");
  ASSERT_EQ(first.exit_code, 0) << first.err << first.out;
  Finished second = run_process(
      launched(2, {COHORT_BINARY, "train", "--resume", split.string(), "--epochs", "2", "--no-progress"}), dir, "second");
  ASSERT_EQ(second.exit_code, 0) << second.err << second.out;
  EXPECT_THAT(second.err, HasSubstr("[rank 0] cohort: resumed"));
  expect_same_run(whole, split);
}

TEST(DistributedTrainer, ABatchThatDoesNotDivideAmongTheProcessesIsAnError) {
  const fs::path dir = fresh_dir("indivisible");
  Finished multi = run_process(launched(3, train_flags(dir / "run", {"--epochs", "1"})), dir, "three");
  EXPECT_NE(multi.exit_code, 0);
  EXPECT_THAT(multi.err, HasSubstr("--batch-size 32 is the batch of the whole run and must divide among its 3 processes"));
}

}  // namespace
