// `cohort launch --nproc-per-node N -- cohort train ...` (Note [Trainer processes]): the metrics and
// weights of one process on the same batches, with DataParallel inside each process too, resume of a
// multi-process run, a restart after a rank is killed (--max-restarts), rank 0 alone logging, and a batch
// that does not divide among the processes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "apps/run_cohort.h"
#include "apps/same_run.h"
#include "cohort/io/safetensors.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "support/run_metrics.h"
#include "support/subprocess.h"

#include "app/run_checkpoint.h"
#include "support/paths.h"

namespace fs = std::filesystem;
using cohort::testing::Finished;
using cohort::testing::run_process;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

fs::path fresh_dir(const std::string& name) {
  return cohort::testing::fresh_test_dir("ddp-trainer", name);
}

std::vector<std::string> train_flags(const fs::path& out, std::vector<std::string> more = {}) {
  std::vector<std::string> flags = {cohort::testing::cohort_binary(), "train", "--dataset", "synthetic", "--limit", "512",
                                    "--batch-size", "32", "--model", "lenet", "--lr", "0.05", "--workers", "0",
                                    "--threads", "1", "--log-every", "4", "--no-progress", "--out", out.string()};
  flags.insert(flags.end(), more.begin(), more.end());
  return flags;
}

std::vector<std::string> launched(int processes, std::vector<std::string> command) {
  std::vector<std::string> argv = {cohort::testing::cohort_binary(), "launch", "--nproc-per-node", std::to_string(processes), "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}


std::vector<std::string> with(std::vector<std::string> flags, const std::vector<std::string>& more) {
  flags.insert(flags.end(), more.begin(), more.end());
  return flags;
}

void expect_same_run(const fs::path& one, const fs::path& many) { cohort::testing::expect_same_run(one, many, 512); }

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

// The char-lstm carries its state between batches (Note [Carried state]): rank r holds the rows of
// streams r, r + 2, ..., and a checkpoint taken mid-epoch gathers every stream's row, which each rank
// takes its own rows from on resume. Two processes, stopped after step 3 and resumed, give the run of
// one process.
TEST(DistributedTrainer, TheCharLSTMsCarriedStateFollowsItsStreamsAcrossProcessesAndAResume) {
  const fs::path dir = fresh_dir("carried"), one = dir / "one", two = dir / "two";
  fs::create_directories(dir / "corpus");
  {
    std::ofstream out(dir / "corpus" / "lines");
    for (int i = 0; i < 40; ++i) out << "the cat sat on the mat " << i << ".\nthe dog ate the log.\n";
  }
  auto flags = [&](const fs::path& out, std::vector<std::string> more) {
    std::vector<std::string> f = {cohort::testing::cohort_binary(), "train", "--model", "char-lstm", "--dataset",
                                  "text:" + (dir / "corpus").string(), "--seq-len", "16", "--batch-size", "8",
                                  "--optimizer", "sgd", "--lr", "0.5", "--threads", "1", "--workers", "0",
                                  "--log-every", "1", "--no-progress", "--out", out.string(), "--epochs", "1"};
    f.insert(f.end(), more.begin(), more.end());
    return f;
  };
  Finished single = run_process(flags(one, {}), dir, "one");
  ASSERT_EQ(single.exit_code, 0) << single.err;
  Finished multi = run_process(launched(2, flags(two, {"--checkpoint-every", "3", "--keep-checkpoints", "99"})), dir, "two");
  ASSERT_EQ(multi.exit_code, 0) << multi.err << multi.out;
  for (const auto& path : cohort::app::list_checkpoints(two))
    if (cohort::app::read_checkpoint(path).progress.step > 3) fs::remove(path);
  const cohort::app::Checkpoint at = cohort::app::read_checkpoint(two);
  ASSERT_EQ(at.progress.step, 3);
  ASSERT_EQ(at.progress.carried.size(), 2u);
  EXPECT_EQ(at.progress.carried[0].size(0), 8);  // every stream's row, not rank 0's 4
  Finished resumed = run_process(launched(2, {cohort::testing::cohort_binary(), "train", "--resume", two.string(), "--no-progress"}), dir,
                                 "resumed");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err << resumed.out;
  cohort::testing::expect_same_run(one, two, 8 * 16);
}

// 513 samples on 2 processes: the sampler pads the last batch with a repeated sample, which counts
// for nothing (Note [Uneven shards]), so the metrics and weights are still those of one process.
TEST(DistributedTrainer, ATrainingSetThatDoesNotDivideAmongTheProcessesGivesTheRunOfOne) {
  const fs::path dir = fresh_dir("uneven"), one = dir / "one", two = dir / "two";
  const std::vector<std::string> more = {"--epochs", "2", "--limit", "513"};
  Finished single = run_process(train_flags(one, more), dir, "one");
  ASSERT_EQ(single.exit_code, 0) << single.err;
  Finished multi = run_process(launched(2, train_flags(two, more)), dir, "two");
  ASSERT_EQ(multi.exit_code, 0) << multi.err << multi.out;
  cohort::testing::expect_same_run(one, two, 513);
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
      launched(2, {cohort::testing::cohort_binary(), "train", "--resume", split.string(), "--epochs", "2", "--no-progress"}), dir, "second");
  ASSERT_EQ(second.exit_code, 0) << second.err << second.out;
  EXPECT_THAT(second.err, HasSubstr("[rank 0] cohort: resumed"));
  expect_same_run(whole, split);
}

// The pid of the process whose environment has RANK=`rank` and whose command line mentions `marker`; -1.
pid_t find_rank(int rank, const std::string& marker) {
  auto read = [](const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  const std::string var = std::string("RANK=") + std::to_string(rank) + '\0';
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (read(entry.path() / "cmdline").find(marker) == std::string::npos) continue;
    const std::string env = '\0' + read(entry.path() / "environ");
    if (env.find('\0' + var) != std::string::npos) return std::stoi(name);
  }
  return -1;
}

TEST(DistributedTrainer, ARankKilledMidEpochRestartsTheGroupWhichResumesTheRun) {
  const fs::path dir = fresh_dir("restart"), whole = dir / "whole", killed = dir / "killed";
  // 32 steps an epoch, a checkpoint every 4: rank 1 is killed once step 12's is written.
  const std::vector<std::string> more = {"--limit", "1024", "--epochs", "2", "--checkpoint-every", "4"};
  Finished uninterrupted = run_process(launched(2, train_flags(whole, more)), dir, "whole");
  ASSERT_EQ(uninterrupted.exit_code, 0) << uninterrupted.err;
  // An older run in the directory, which the job replaces with --overwrite: the restarted attempt must
  // resume the job's own run, and not wipe it again.
  Finished old = run_process(train_flags(killed, {"--epochs", "1", "--lr", "0.1"}), dir, "old");
  ASSERT_EQ(old.exit_code, 0) << old.err;

  std::vector<std::string> argv = launched(2, train_flags(killed, with(more, {"--overwrite"})));
  argv.insert(argv.begin() + 2, {"--max-restarts", "2"});
  std::atomic<bool> done{false};
  pid_t victim = -1;
  std::thread killer([&] {
    const fs::path step12 = killed / "checkpoints" / "step-00000012.safetensors";
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!done && !fs::exists(step12) && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (done || (victim = find_rank(1, killed.string())) < 0) return;
    ::kill(victim, SIGKILL);
  });
  Finished restarted = run_process(argv, dir, "killed");
  done = true;
  killer.join();
  ASSERT_GT(victim, 0) << "rank 1 was not found to be killed\n" << restarted.err;
  ASSERT_EQ(restarted.exit_code, 0) << restarted.err << restarted.out;
  EXPECT_THAT(restarted.err, HasSubstr("launch: rank 1 failed (was killed by SIGKILL); restarting the group, "
                                       "attempt 2 of 3 (run id default-restart-1)"));
  EXPECT_THAT(restarted.err, HasSubstr("[rank 0] cohort: resumed " + (killed / "checkpoints").string()));
  EXPECT_THAT(restarted.err, Not(HasSubstr("attempt 3 of 3")));
  // Resumed bit for bit (Note [Exact resume]): the records and weights of the run that was never stopped.
  EXPECT_EQ(cohort::testing::metrics_of(killed), cohort::testing::metrics_of(whole));
  auto x = cohort::io::load_safetensors(cohort::app::list_checkpoints(whole).back());
  auto y = cohort::io::load_safetensors(cohort::app::list_checkpoints(killed).back());
  for (const auto& item : x)
    if (item.key().rfind("model/", 0) == 0) EXPECT_TRUE(cohort::equal(item.value(), y[item.key()])) << item.key();
}

// Ctrl-C to the launcher reaches every rank; they stop after the same step (Note [Interrupted
// training]), rank 0 checkpoints it, and the run resumes to the numbers of one that never stopped.
TEST(DistributedTrainer, AnInterruptedLaunchStopsEveryRankAfterTheSameStepAndResumes) {
  const fs::path dir = fresh_dir("interrupted"), whole = dir / "whole", run = dir / "run";
  ASSERT_EQ(run_process(train_flags(whole, {"--epochs", "2"}), dir, "whole").exit_code, 0);
  const std::string log = (dir / "run.log").string();
  const pid_t launcher = cohort::testing::spawn_process(
      launched(2, train_flags(run, {"--epochs", "1000", "--checkpoint-every", "1"})), log);
  auto text = [&] {
    std::ifstream in(log);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  };
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (cohort::app::list_checkpoints(run).empty() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  ASSERT_FALSE(cohort::app::list_checkpoints(run).empty()) << text();
  ::kill(launcher, SIGINT);
  int status = 0;
  ::waitpid(launcher, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << text();
  EXPECT_EQ(WEXITSTATUS(status), 130) << text();
  const int64_t step = cohort::app::read_checkpoint(run).progress.step;
  EXPECT_THAT(text(), HasSubstr("[rank 0] cohort train: interrupted at step " + std::to_string(step)));
  EXPECT_THAT(text(), Not(HasSubstr("SIGKILL")));
  if (step >= 32) return;  // past the two epochs to compare with
  Finished resumed = run_process(
      launched(2, {cohort::testing::cohort_binary(), "train", "--resume", run.string(), "--epochs", "2", "--no-progress"}), dir, "resumed");
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err << resumed.out;
  expect_same_run(whole, run);
}

TEST(DistributedTrainer, ARefusedFirstAttemptIsNotRestartedIntoTheOldRun) {
  const fs::path dir = fresh_dir("refused"), old = dir / "old";
  ASSERT_EQ(run_process(train_flags(old, {"--epochs", "1"}), dir, "old").exit_code, 0);
  const auto checkpoints = cohort::app::list_checkpoints(old);
  std::vector<std::string> argv = launched(2, train_flags(old, {"--epochs", "2", "--lr", "0.1"}));
  argv.insert(argv.begin() + 2, {"--max-restarts", "1"});
  Finished again = run_process(argv, dir, "again");
  EXPECT_NE(again.exit_code, 0);
  EXPECT_THAT(again.err, HasSubstr("[rank 0] error: cohort train: the output directory " + old.string() + " is not empty"));
  EXPECT_THAT(again.err, HasSubstr("attempt 2 of 2"));
  EXPECT_THAT(again.err, Not(HasSubstr("cohort: resumed")));
  EXPECT_EQ(cohort::app::list_checkpoints(old), checkpoints);
  EXPECT_EQ(cohort::app::read_checkpoint(old).config.lr, 0.05);
}

TEST(DistributedTrainer, ABatchThatDoesNotDivideAmongTheProcessesIsAnError) {
  const fs::path dir = fresh_dir("indivisible");
  Finished multi = run_process(launched(3, train_flags(dir / "run", {"--epochs", "1"})), dir, "three");
  EXPECT_NE(multi.exit_code, 0);
  EXPECT_THAT(multi.err, HasSubstr("--batch-size 32 is the batch of the whole run and must divide among its 3 processes"));
}

}  // namespace
