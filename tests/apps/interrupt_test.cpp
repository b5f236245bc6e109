// Ctrl-C and SIGTERM to `cohort train` (Note [Interrupted training] in apps/cohort/app/trainer.cpp),
// with the real program in a child process: the step in progress finishes, a checkpoint is written,
// the program names the step and the --resume that continues, exits 128 + the signal, and the
// resumed run equals one that was never interrupted; a second signal ends it at once.
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
#include "support/run_metrics.h"
#include "support/subprocess.h"

#include "app/run_checkpoint.h"
#include "apps/run_cohort.h"

namespace fs = std::filesystem;
using cohort::testing::run_cohort;
using cohort::testing::text_of;
using ::testing::HasSubstr;

namespace {

fs::path fresh_dir(const std::string& name) {
  fs::path dir = cohort::testing::fresh_test_dir("interrupt", name);
  fs::create_directories(dir);
  return dir;
}

std::vector<std::string> train_flags(const fs::path& out, const std::vector<std::string>& more = {}) {
  std::vector<std::string> flags = {"train", "--dataset", "synthetic", "--limit", "512", "--batch-size", "32",
                                    "--model", "lenet", "--lr", "0.05", "--workers", "0", "--threads", "1",
                                    "--log-every", "4", "--no-progress", "--epochs", "2", "--out", out.string()};
  flags.insert(flags.end(), more.begin(), more.end());
  return flags;
}

struct Child {
  pid_t pid;
  fs::path log;
};

// The program with `args`, its stdout and stderr in `log`.
Child start(std::vector<std::string> args, const fs::path& log) {
  return {cohort::testing::spawn_cohort(std::move(args), log), log};
}

// Waits until `run` has a checkpoint (the run is well into training), at most a minute.
bool wait_for_checkpoint(const fs::path& run) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (cohort::app::list_checkpoints(run).empty() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  return !cohort::app::list_checkpoints(run).empty();
}

cohort::Tensor final_weight(const fs::path& run) {
  return cohort::io::load_safetensors(cohort::app::list_checkpoints(run).back())["model/fc3.weight"];
}

}  // namespace

TEST(Interrupt, TheFirstSignalCheckpointsAndSaysHowToResume) {
  const fs::path dir = fresh_dir("first");
  ASSERT_EQ(run_cohort(train_flags(dir / "whole")).first, 0);
  for (const int sig : {SIGINT, SIGTERM}) {
    const fs::path run = dir / ("run-" + std::to_string(sig));
    // Many epochs, so the signal always finds it training; the resume then asks for the first two.
    Child child = start(train_flags(run, {"--checkpoint-every", "1", "--epochs", "1000"}),
                        dir / ("run-" + std::to_string(sig) + ".log"));
    ASSERT_TRUE(wait_for_checkpoint(run)) << text_of(child.log);
    ::kill(child.pid, sig);
    int status = 0;
    ::waitpid(child.pid, &status, 0);
    const std::string log = text_of(child.log);
    ASSERT_TRUE(WIFEXITED(status)) << log;
    EXPECT_EQ(WEXITSTATUS(status), 128 + sig) << log;
    const int64_t step = cohort::app::read_checkpoint(run).progress.step;
    EXPECT_THAT(log, HasSubstr("cohort train: interrupted at step " + std::to_string(step) + " (" +
                               (sig == SIGINT ? "SIGINT" : "SIGTERM") + "); resume with --resume " + run.string()));
    if (step >= 32) continue;  // past the two epochs of the run to compare with
    auto [code, err] =
        run_cohort({"train", "--resume", run.string(), "--epochs", "2", "--threads", "1", "--no-progress"});
    ASSERT_EQ(code, 0) << err;
    EXPECT_EQ(cohort::testing::metrics_of(run), cohort::testing::metrics_of(dir / "whole"));
    EXPECT_TRUE(cohort::equal(final_weight(run), final_weight(dir / "whole")));
  }
}

// A second signal (a different one, so the kernel cannot merge it with the first) ends the program
// at once, by that signal.
TEST(Interrupt, ASecondSignalStopsAtOnce) {
  const fs::path dir = fresh_dir("second");
  Child child = start(train_flags(dir / "run", {"--epochs", "1000", "--checkpoint-every", "1"}), dir / "run.log");
  ASSERT_TRUE(wait_for_checkpoint(dir / "run")) << text_of(child.log);
  // Both are sent while it is stopped, so both are pending when it runs again: the first cannot have
  // finished its checkpoint and exit before the second arrives.
  int status = 0;
  ::kill(child.pid, SIGSTOP);
  ASSERT_EQ(::waitpid(child.pid, &status, WUNTRACED), child.pid);
  ASSERT_TRUE(WIFSTOPPED(status)) << text_of(child.log);
  ::kill(child.pid, SIGINT);
  ::kill(child.pid, SIGTERM);
  ::kill(child.pid, SIGCONT);
  ::waitpid(child.pid, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << status << "\n" << text_of(child.log);
  // The kernel delivers SIGINT first, but threads may take the two at once: either may be the second.
  EXPECT_TRUE(WTERMSIG(status) == SIGTERM || WTERMSIG(status) == SIGINT) << WTERMSIG(status);
}
