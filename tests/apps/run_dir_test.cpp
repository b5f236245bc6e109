// `cohort train`'s run directory (Note [Run directories] in apps/cohort/app/run_dir.h): a new run
// refuses a directory that holds another, --overwrite replaces it without following symlinks, a
// checkpoint of another run is refused, the lock names its holder, a damaged newest checkpoint falls
// back to the newest intact one, a checkpoint file can be resumed, a resume cleans up after kills,
// and a run whose directory was removed under it writes nothing into the run that took the path.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cohort/io/safetensors.h"
#include "cohort/ops/pointwise.h"
#include "support/error_of.h"
#include "support/run_metrics.h"

#include "app/cli.h"
#include "app/run_checkpoint.h"
#include "apps/run_cohort.h"
#include "app/run_dir.h"

namespace fs = std::filesystem;
using cohort::testing::error_of;
using cohort::testing::run_cohort;
using cohort::testing::spawn_cohort;
using cohort::testing::text_of;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

fs::path fresh_dir(const std::string& name) {
  return cohort::testing::fresh_test_dir("run-dir", name);
}

std::vector<std::string> train_flags(const fs::path& out, const std::vector<std::string>& more = {}) {
  std::vector<std::string> flags = {"train", "--dataset", "synthetic", "--limit", "512", "--batch-size", "32",
                                    "--model", "lenet", "--lr", "0.05", "--workers", "0", "--threads", "1",
                                    "--log-every", "4", "--no-progress", "--out", out.string()};
  flags.insert(flags.end(), more.begin(), more.end());
  return flags;
}

void write_text(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// A pid that no process has: a child's, after it was reaped.
pid_t dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  ::waitpid(pid, nullptr, 0);
  return pid;
}

cohort::Tensor final_weight(const fs::path& run) {
  return cohort::io::load_safetensors(cohort::app::list_checkpoints(run).back())["model/fc3.weight"];
}

}  // namespace

TEST(RunDir, ANewRunRefusesADirectoryHoldingARunAndOverwriteReplacesIt) {
  const fs::path base = fresh_dir("refuse"), x = base / "x", outside = base / "outside";
  ASSERT_EQ(run_cohort(train_flags(x, {"--epochs", "2"})).first, 0);
  const auto old_checkpoints = cohort::app::list_checkpoints(x);
  ASSERT_EQ(old_checkpoints.size(), 2u);

  auto [code, err] = run_cohort(train_flags(x, {"--epochs", "1", "--lr", "0.1"}));
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("the output directory " + x.string() + " is not empty"));
  EXPECT_THAT(err, HasSubstr("--resume " + x.string()));
  EXPECT_THAT(err, HasSubstr("--overwrite"));
  EXPECT_EQ(cohort::app::list_checkpoints(x), old_checkpoints);

  // Symlinks are removed, never followed; files a run does not write stay.
  fs::create_directories(outside / "checkpoints");
  write_text(outside / "precious.html", "keep me");
  write_text(outside / "checkpoints" / "step-00000001.safetensors", "keep me too");
  fs::remove(x / "report.html");
  fs::create_symlink(outside / "precious.html", x / "report.html");
  write_text(x / "notes.txt", "mine");
  fs::create_directories(x / "extra");
  fs::create_symlink(outside / "checkpoints", x / "extra" / "checkpoints");

  std::tie(code, err) = run_cohort(train_flags(x, {"--epochs", "1", "--lr", "0.1", "--overwrite"}));
  ASSERT_EQ(code, 0) << err;
  EXPECT_EQ(text_of(outside / "precious.html"), "keep me");
  EXPECT_EQ(text_of(outside / "checkpoints" / "step-00000001.safetensors"), "keep me too");
  EXPECT_EQ(text_of(x / "notes.txt"), "mine");
  EXPECT_FALSE(fs::is_symlink(x / "report.html"));
  // Only the new run is left: one checkpoint (1 epoch), tagged with run.json's id, and one config line.
  const auto now = cohort::app::list_checkpoints(x);
  ASSERT_EQ(now.size(), 1u);
  const auto identity = cohort::app::read_run_identity(x);
  ASSERT_TRUE(identity.has_value());
  EXPECT_EQ(cohort::app::read_checkpoint(now[0]).run_id, identity->run_id);
  EXPECT_EQ(cohort::app::read_checkpoint(now[0]).config.lr, 0.1);
  int configs = 0;
  std::ifstream metrics(x / "metrics.jsonl");
  for (std::string line; std::getline(metrics, line);) configs += line.find("\"kind\":\"config\"") != std::string::npos;
  EXPECT_EQ(configs, 1);
  EXPECT_THAT(run_cohort({"train", "--resume", x.string(), "--overwrite"}).second,
              HasSubstr("--overwrite starts a new run and --resume continues one"));
}

TEST(RunDir, ACheckpointOfAnotherRunInTheDirectoryIsAnErrorNamingIt) {
  const fs::path dir = fresh_dir("other-run"), a = dir / "a", b = dir / "b";
  ASSERT_EQ(run_cohort(train_flags(a, {"--epochs", "1"})).first, 0);
  ASSERT_EQ(run_cohort(train_flags(b, {"--epochs", "2"})).first, 0);
  const fs::path stray = a / "checkpoints" / cohort::app::list_checkpoints(b).back().filename();
  fs::copy_file(cohort::app::list_checkpoints(b).back(), stray);
  auto [code, err] = run_cohort({"train", "--resume", a.string(), "--epochs", "3", "--no-progress"});
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr(stray.string() + " belongs to another run"));
  EXPECT_THAT(run_cohort({"eval", "--checkpoint", a.string()}).second, HasSubstr(stray.string() + " belongs to another run"));
  // Not only the newest: any checkpoint of another run in the directory.
  fs::remove(stray);
  const fs::path older = a / "checkpoints" / "step-00000001.safetensors";
  fs::copy_file(cohort::app::list_checkpoints(b).back(), older);
  EXPECT_THAT(run_cohort({"train", "--resume", a.string(), "--epochs", "3", "--no-progress"}).second,
              HasSubstr(older.string() + " belongs to another run"));
}

TEST(RunDir, ASecondRunIntoALockedDirectoryNamesTheHoldersPid) {
  const fs::path dir = fresh_dir("locked"), x = dir / "x";
  const fs::path log = dir / "first.log";
  const pid_t first = spawn_cohort(train_flags(x, {"--epochs", "1000"}), log);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (cohort::app::list_checkpoints(x).empty() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_FALSE(cohort::app::list_checkpoints(x).empty()) << text_of(log);

  for (const std::vector<std::string>& second :
       {train_flags(x, {"--epochs", "1", "--overwrite"}), std::vector<std::string>{"train", "--out", x.string(), "--resume", x.string()}}) {
    auto [code, err] = run_cohort(second);
    EXPECT_EQ(code, 1);
    EXPECT_THAT(err, HasSubstr(x.string() + " is in use by another cohort run (pid " + std::to_string(first) + ","));
  }
  EXPECT_TRUE(fs::exists(x / "metrics.jsonl")) << "--overwrite wiped a directory in use";

  ::kill(first, SIGKILL);
  ::waitpid(first, nullptr, 0);
  auto [code, err] = run_cohort(train_flags(x, {"--epochs", "1", "--overwrite"}));  // the kernel released the lock
  EXPECT_EQ(code, 0) << err;
}

TEST(RunDir, ALockWhoseDirectoryWasRemovedAndRetakenRefusesToWriteNamingTheDirectory) {
  const fs::path dir = fresh_dir("retaken") / "x";
  cohort::app::RunDirLock old_lock(dir);
  EXPECT_NO_THROW(old_lock.check_still_held());
  fs::remove_all(dir);
  std::string err = error_of([&] { old_lock.check_still_held(); });
  EXPECT_THAT(err, HasSubstr(dir.string() + " is no longer this run's directory"));
  cohort::app::RunDirLock new_lock(dir);  // the old lock's file is gone, so nothing stops a new run
  EXPECT_NO_THROW(new_lock.check_still_held());
  err = error_of([&] { old_lock.check_still_held(); });
  EXPECT_THAT(err, HasSubstr("was removed or replaced while the run was training"));
}

TEST(RunDir, ARunWhoseDirectoryWasRemovedDoesNotCheckpointIntoTheRunThatTookIt) {
  const fs::path dir = fresh_dir("removed-live"), x = dir / "x";
  // Batch 1: an epoch is thousands of steps, so the first run is stopped long before its first checkpoint.
  const fs::path log = dir / "first.log";
  const pid_t first = spawn_cohort({"train", "--dataset", "synthetic", "--batch-size", "1", "--model", "lenet",
                                    "--workers", "0", "--threads", "1", "--log-every", "4", "--no-progress",
                                    "--epochs", "1000", "--out", x.string()},
                                   log);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (text_of(x / "metrics.jsonl").find("\"kind\":\"step\"") == std::string::npos &&
         std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ::kill(first, SIGSTOP);
  ASSERT_TRUE(cohort::app::list_checkpoints(x).empty()) << "the first run checkpointed before it was stopped";

  // The user deletes the live run's directory, and a new run takes the path.
  fs::remove_all(x);
  auto [code, err] = run_cohort(train_flags(x, {"--epochs", "1"}));
  EXPECT_EQ(code, 0) << err;
  const std::vector<fs::path> taken = cohort::app::list_checkpoints(x);
  ASSERT_FALSE(taken.empty());

  // Stopped, the first run checkpoints as it leaves: that checkpoint would land in the new run.
  ::kill(first, SIGCONT);
  ::kill(first, SIGTERM);
  int status = 0;
  ::waitpid(first, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << text_of(log);
  EXPECT_THAT(text_of(log), HasSubstr(x.string() + " is no longer this run's directory"));
  EXPECT_EQ(cohort::app::list_checkpoints(x), taken);
  auto [resumed, resume_err] = run_cohort({"train", "--out", x.string(), "--resume", x.string(), "--epochs", "2"});
  EXPECT_EQ(resumed, 0) << resume_err;
}

TEST(RunDir, ResumeSkipsADamagedNewestCheckpointAndSaysSo) {
  const fs::path dir = fresh_dir("damaged"), whole = dir / "whole", x = dir / "x";
  ASSERT_EQ(run_cohort(train_flags(whole, {"--epochs", "2"})).first, 0);
  ASSERT_EQ(run_cohort(train_flags(x, {"--epochs", "1", "--checkpoint-every", "4", "--keep-checkpoints", "9"})).first, 0);
  const auto all = cohort::app::list_checkpoints(x);
  ASSERT_EQ(all.size(), 4u);  // steps 4, 8, 12, 16
  std::string bytes = text_of(all.back());
  bytes[bytes.size() - 100] ^= 0x10;
  write_text(all.back(), bytes);

  auto [code, err] = run_cohort({"train", "--resume", x.string(), "--epochs", "2", "--threads", "1", "--no-progress"});
  ASSERT_EQ(code, 0) << err;
  EXPECT_THAT(err, HasSubstr("cohort: skipping " + all.back().string() + ": "));
  EXPECT_THAT(err, HasSubstr("corrupt"));
  EXPECT_THAT(err, HasSubstr("cohort: resumed " + all[2].string()));
  EXPECT_TRUE(fs::exists(all.back().string() + ".skipped"));
  EXPECT_EQ(cohort::testing::metrics_of(x), cohort::testing::metrics_of(whole));
  EXPECT_TRUE(cohort::equal(final_weight(x), final_weight(whole)));
}

TEST(RunDir, ResumeAcceptsACheckpointFile) {
  const fs::path dir = fresh_dir("file"), whole = dir / "whole", x = dir / "x";
  ASSERT_EQ(run_cohort(train_flags(whole, {"--epochs", "2"})).first, 0);
  ASSERT_EQ(run_cohort(train_flags(x, {"--epochs", "2", "--checkpoint-every", "5", "--keep-checkpoints", "99"})).first, 0);
  const fs::path step20 = x / "checkpoints" / "step-00000020.safetensors";
  ASSERT_TRUE(fs::exists(step20));
  auto [code, err] = run_cohort({"train", "--resume", step20.string(), "--threads", "1", "--no-progress"});
  ASSERT_EQ(code, 0) << err;
  EXPECT_THAT(err, HasSubstr("cohort: resumed " + step20.string()));
  EXPECT_EQ(cohort::testing::metrics_of(x), cohort::testing::metrics_of(whole));
  EXPECT_TRUE(cohort::equal(final_weight(x), final_weight(whole)));
}

TEST(RunDir, AResumeRemovesTheTempFilesOfDeadProcessesAndPrunes) {
  const fs::path x = fresh_dir("cleanup") / "x";
  ASSERT_EQ(run_cohort(train_flags(x, {"--epochs", "1", "--checkpoint-every", "4", "--keep-checkpoints", "2"})).first, 0);
  ASSERT_EQ(cohort::app::list_checkpoints(x).size(), 2u);
  // What kills leave: temp files of saves, and a checkpoint past --keep-checkpoints (killed before pruning).
  fs::copy_file(cohort::app::list_checkpoints(x).front(), x / "checkpoints" / "step-00000004.safetensors");
  const std::string dead = std::to_string(dead_pid()), live = std::to_string(::getppid());
  const std::vector<fs::path> stale = {x / ("report.html.tmp." + dead), x / ("eval.json.tmp." + dead),
                                       x / ("samples.png.tmp." + dead),
                                       x / "checkpoints" / ("step-00000020.safetensors.tmp." + dead)};
  for (const auto& file : stale) write_text(file, "torn");
  const fs::path in_progress = x / ("report.html.tmp." + live);
  write_text(in_progress, "being written");

  auto [code, err] = run_cohort({"train", "--resume", x.string(), "--threads", "1", "--no-progress"});
  ASSERT_EQ(code, 0) << err;
  for (const auto& file : stale) EXPECT_FALSE(fs::exists(file)) << file;
  EXPECT_TRUE(fs::exists(in_progress)) << "the temp file of a live process was removed";
  EXPECT_EQ(cohort::app::list_checkpoints(x).size(), 2u);
}
