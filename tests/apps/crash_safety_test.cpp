// Crash safety of `cohort train`, with the real program in child processes: SIGKILL at
// seeded random moments — during start-up, steps, checkpoint saves, evaluation, the report — must
// always leave a newest checkpoint that loads intact, and `--resume` must finish the run with the
// weights of a run that was never interrupted. A full disk during a checkpoint save (RLIMIT_FSIZE)
// must stop the run with exit code 1 and an error naming the file, keeping the previous checkpoint.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cohort/core/generator.h"
#include "cohort/io/safetensors.h"
#include "cohort/ops/pointwise.h"
#include "support/run_metrics.h"

#include "app/data_setup.h"
#include "app/optim_setup.h"
#include "app/run_checkpoint.h"
#include "support/paths.h"

namespace fs = std::filesystem;
using cohort::testing::metrics_of;
using Clock = std::chrono::steady_clock;
using ::testing::HasSubstr;

namespace {

fs::path scratch_root() { return fs::temp_directory_path() / ("cohort-crash-test-" + std::to_string(::getpid())); }

// Removes the test's runs unless it failed (then they are kept to look at).
void remove_runs_if_passed() {
  if (!::testing::Test::HasFailure()) fs::remove_all(scratch_root());
}

fs::path fresh_dir(const std::string& name) {
  fs::path dir = scratch_root() / name;
  fs::remove_all(dir);
  fs::create_directories(dir.parent_path());
  return dir;
}

// A run short enough to be killed many times: 16 steps in 2 epochs, a checkpoint after every step.
// --overwrite: a run killed before its first checkpoint is started again over what it left.
std::vector<std::string> train_flags(const fs::path& out) {
  return {"train", "--dataset", "synthetic", "--limit", "256", "--batch-size", "32", "--model", "lenet",
          "--epochs", "2", "--lr", "0.05", "--workers", "1", "--threads", "1", "--log-every", "1",
          "--checkpoint-every", "1", "--no-progress", "--overwrite", "--out", out.string()};
}

// The thread count is not part of a run's recipe; a resume matches the run bit for bit with the same.
std::vector<std::string> resume_flags(const fs::path& run) {
  return {"train", "--resume", run.string(), "--threads", "1", "--no-progress"};
}

std::vector<std::string> with_epochs(std::vector<std::string> flags, int epochs) {
  flags.insert(flags.end(), {"--epochs", std::to_string(epochs)});
  return flags;
}

struct Child {
  pid_t pid = -1;
  fs::path log;
};

// Starts the cohort program with stdout and stderr in `log`; with fsize > 0, every file it writes is
// limited to fsize bytes (a write past it fails with EFBIG, as on a full disk).
Child spawn(const std::vector<std::string>& args, const fs::path& log, rlim_t fsize = 0) {
  std::vector<std::string> all = {cohort::testing::cohort_binary()};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string log_path = log.string();
  const pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls until exec
    const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) ::dup2(fd, 1), ::dup2(fd, 2);
    if (fsize > 0) {
      ::signal(SIGXFSZ, SIG_IGN);  // else the kernel kills the writer instead of failing the write
      rlimit limit{fsize, fsize};
      ::setrlimit(RLIMIT_FSIZE, &limit);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return {pid, log};
}

// Waits for the child; returns its wait status, or kills it and fails after `timeout`.
int wait_for(const Child& child, std::chrono::seconds timeout = std::chrono::seconds(300)) {
  const auto deadline = Clock::now() + timeout;
  int status = 0;
  while (::waitpid(child.pid, &status, WNOHANG) == 0) {
    if (Clock::now() > deadline) {
      ::kill(child.pid, SIGKILL);
      ::waitpid(child.pid, &status, 0);
      ADD_FAILURE() << "cohort did not finish within " << timeout.count() << " s";
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return status;
}

std::string text_of(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }

// Runs cohort to completion; expects exit code 0.
void run_to_end(const std::vector<std::string>& args, const fs::path& log) {
  const int status = wait_for(spawn(args, log));
  ASSERT_EQ(exit_code(status), 0) << "status " << status << "\n" << text_of(log);
}

// The newest checkpoint must load: its run state (read_checkpoint) and, through io::load_checkpoint,
// the model and the optimizer built as the trainer builds them. Returns its step, -1 if none.
int64_t check_newest_loads(const fs::path& run) {
  const auto all = cohort::app::list_checkpoints(run);
  if (all.empty()) return -1;
  const std::string rng = cohort::default_generator().get_state();
  cohort::app::Checkpoint c = cohort::app::read_checkpoint(run);
  EXPECT_EQ(c.path, all.back());
  auto model = cohort::app::create_model(c.config.model, *c.data);
  auto optimizer = cohort::app::make_optimizer(c.config, model->parameters());
  cohort::app::restore_checkpoint(c, *model, optimizer.get(), nullptr);
  cohort::default_generator().set_state(rng);
  return c.progress.step;
}


cohort::Tensor final_weight(const fs::path& run) {
  return cohort::io::load_safetensors(cohort::app::list_checkpoints(run).back())["model/fc3.weight"];
}

}  // namespace

TEST(CrashSafety, KilledAtRandomMomentsTheNewestCheckpointLoadsAndResumeFinishes) {
  const fs::path reference = fresh_dir("reference");
  const auto start = Clock::now();
  ASSERT_NO_FATAL_FAILURE(run_to_end(train_flags(reference), reference.string() + ".log"));
  const double run_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  const cohort::Tensor want = final_weight(reference);
  const std::vector<nlohmann::json> want_metrics = metrics_of(reference);

  constexpr int kKills = 40;
  std::mt19937_64 rng(8);
  // Moments spread over a whole run (start-up and the final report included), a little beyond.
  std::uniform_real_distribution<double> delay_ms(0, 1.1 * run_ms);
  int run_index = 0, kills = 0, finished = 0, resumed = 0;
  std::set<fs::path> torn_saves;  // temp files left by saves a kill interrupted
  fs::path run = fresh_dir("run-0");
  int64_t newest = -1;
  for (int attempt = 0; kills < kKills && attempt < 4 * kKills; ++attempt) {
    const bool resume = !cohort::app::list_checkpoints(run).empty();
    resumed += resume;
    const std::vector<std::string> args =
        resume ? resume_flags(run) : train_flags(run);
    const Child child = spawn(args, run.string() + ".log");
    const auto kill_at = Clock::now() + std::chrono::microseconds(static_cast<int64_t>(1000 * delay_ms(rng)));
    int status = 0;
    pid_t done = 0;
    while ((done = ::waitpid(child.pid, &status, WNOHANG)) == 0 && Clock::now() < kill_at)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    if (done == 0) {
      ::kill(child.pid, SIGKILL);
      ::waitpid(child.pid, &status, 0);
      ++kills;
    }
    const std::string what = "attempt " + std::to_string(attempt) + (resume ? " (resumed " : " (fresh ") + run.string() + ")";
    if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL) FAIL() << what << ": died of signal " << WTERMSIG(status) << "\n" << text_of(run.string() + ".log");
    if (WIFEXITED(status)) ASSERT_EQ(WEXITSTATUS(status), 0) << what << "\n" << text_of(run.string() + ".log");

    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(run / "checkpoints", ec))
      if (entry.path().string().find(".tmp.") != std::string::npos) torn_saves.insert(entry.path());
    int64_t step = -1;
    ASSERT_NO_THROW(step = check_newest_loads(run)) << what;
    EXPECT_GE(step, newest) << what << ": the newest checkpoint went back";
    newest = step;

    if (WIFEXITED(status)) {  // the run ended before its kill: it must match the uninterrupted one
      ++finished;
      EXPECT_TRUE(cohort::equal(final_weight(run), want)) << what;
      EXPECT_EQ(metrics_of(run), want_metrics) << what;
      for (const auto& entry : fs::directory_iterator(run / "checkpoints"))
        EXPECT_EQ(entry.path().string().find(".tmp."), std::string::npos) << what << ": left behind: " << entry.path();
      for (const char* file : {"eval.json", "report.html", "samples.png"}) EXPECT_TRUE(fs::exists(run / file)) << what << ": " << file;
      run = fresh_dir("run-" + std::to_string(++run_index));
      newest = -1;
    }
  }
  EXPECT_EQ(kills, kKills);

  // The last run, killed, now finishes: the same weights and all its outputs.
  if (cohort::app::list_checkpoints(run).empty())
    ASSERT_NO_FATAL_FAILURE(run_to_end(train_flags(run), run.string() + ".log"));
  else
    ASSERT_NO_FATAL_FAILURE(run_to_end(resume_flags(run), run.string() + ".log"));
  EXPECT_TRUE(cohort::equal(final_weight(run), want));
  EXPECT_EQ(metrics_of(run), want_metrics);
  for (const char* file : {"eval.json", "report.html", "samples.png", "metrics.jsonl"}) EXPECT_TRUE(fs::exists(run / file)) << file;
  std::cout << "[ crash    ] " << kills << " kills (run " << run_ms << " ms), " << resumed << " resumes, " << finished
            << " runs finished before their kill, " << torn_saves.size() << " saves interrupted (their temp files)\n";
  remove_runs_if_passed();
}

TEST(CrashSafety, AFullDiskDuringATrainerSaveFailsCleanlyAndKeepsThePreviousCheckpoint) {
  const fs::path run = fresh_dir("full-disk");
  std::vector<std::string> one_epoch = train_flags(run);
  one_epoch[std::find(one_epoch.begin(), one_epoch.end(), "--epochs") - one_epoch.begin() + 1] = "1";
  one_epoch[std::find(one_epoch.begin(), one_epoch.end(), "--checkpoint-every") - one_epoch.begin() + 1] = "0";
  ASSERT_NO_FATAL_FAILURE(run_to_end(one_epoch, run.string() + ".log"));
  const auto before = cohort::app::list_checkpoints(run);
  ASSERT_EQ(before.size(), 1u);
  const std::string bytes = text_of(before[0]);

  // The next save (the end of epoch 2) is the first file write larger than half a checkpoint.
  const fs::path log = run.string() + ".full.log";
  const int status = wait_for(spawn(with_epochs(resume_flags(run), 2), log, bytes.size() / 2));
  const std::string err = text_of(log);
  EXPECT_EQ(exit_code(status), 1) << "status " << status << "\n" << err;
  EXPECT_THAT(err, HasSubstr("error: "));
  EXPECT_THAT(err, HasSubstr("step-00000016.safetensors"));
  EXPECT_THAT(err, HasSubstr("File too large"));
  EXPECT_EQ(cohort::app::list_checkpoints(run), before);
  EXPECT_EQ(text_of(before[0]), bytes);
  for (const auto& entry : fs::directory_iterator(run / "checkpoints"))
    EXPECT_EQ(entry.path(), before[0]) << "left behind: " << entry.path();
  EXPECT_EQ(check_newest_loads(run), 8);

  // With space again, the run continues from the kept checkpoint.
  ASSERT_NO_FATAL_FAILURE(run_to_end(with_epochs(resume_flags(run), 2), log));
  EXPECT_EQ(cohort::app::read_checkpoint(run).progress.step, 16);
  remove_runs_if_passed();
}
