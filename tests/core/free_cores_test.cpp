// The cores other processes leave free and the thread count that follows them (src/core/free_cores.cpp,
// Note [Threads on a busy machine]): the rounding, the /proc/stat reading, and a real competing process.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "cohort/cohort.h"
#include "core/free_cores.h"

namespace cohort {
namespace {

// One more core counts as taken at half a core more than counted; one fewer at 0.7 less.
TEST(FreeCores, CoresTakenRoundWithHysteresis) {
  using detail::cores_taken_after;
  EXPECT_EQ(cores_taken_after(0.0, 0), 0);
  EXPECT_EQ(cores_taken_after(0.45, 0), 0);  // a light load: the extra thread still pays
  EXPECT_EQ(cores_taken_after(0.55, 0), 1);
  EXPECT_EQ(cores_taken_after(0.67, 0), 1);  // a CPU-bound process beside 2 of our threads on 2 cores
  EXPECT_EQ(cores_taken_after(1.0, 0), 1);
  EXPECT_EQ(cores_taken_after(1.6, 0), 2);
  EXPECT_EQ(cores_taken_after(0.4, 1), 1);  // inside the band: no flip-flop
  EXPECT_EQ(cores_taken_after(0.31, 1), 1);
  EXPECT_EQ(cores_taken_after(0.29, 1), 0);  // the other process left
  EXPECT_EQ(cores_taken_after(1.2, 3), 1);  // down to what round(1.2) says
  EXPECT_EQ(cores_taken_after(0.0, 3), 0);
}

TEST(FreeCores, IdleSecondsCountOnlyTheGivenCpusWithIoWait) {
  const std::string stat =
      "cpu  100 0 50 900 10 0 0 0 0 0\n"
      "cpu0 50 0 25 400 5 0 0 0 0 0\n"
      "cpu1 50 0 25 500 5 0 0 0 0 0\n"
      "cpu7 0 0 0 1000 0 0 0 0 0 0\n"
      "intr 1 2 3\n";
  EXPECT_DOUBLE_EQ(detail::idle_seconds(stat, {0, 1}, 100), 9.1);
  EXPECT_DOUBLE_EQ(detail::idle_seconds(stat, {1}, 100), 5.05);
  EXPECT_DOUBLE_EQ(detail::idle_seconds(stat, {7}, 100), 10.0);
  EXPECT_DOUBLE_EQ(detail::idle_seconds(stat, {3}, 100), 0.0);
  EXPECT_DOUBLE_EQ(detail::idle_seconds("cpu0 1 2 3 4\n", {0}, 100), 0.04);  // old kernels: no iowait
}

TEST(FreeCores, ProcsRunningIsTheFirstGuess) {
  EXPECT_EQ(detail::procs_running("cpu  1 2 3 4\nctxt 5\nprocs_running 3\nprocs_blocked 0\n"), 3);
  EXPECT_EQ(detail::procs_running("cpu  1 2 3 4\n"), 0);
}

TEST(FreeCores, WithinTheBudget) {
  const int f = free_cores();
  EXPECT_GE(f, 1);
  EXPECT_LE(f, core_count());
}

TEST(FreeCores, AdaptiveOffUsesTheThreadCountAsSet) {
  const int before = get_num_threads();
  const bool was = adaptive_threads();
  set_adaptive_threads(false);
  set_num_threads(3);
  EXPECT_EQ(usable_threads(), 3);
  set_adaptive_threads(true);
  EXPECT_LE(usable_threads(), std::min(3, core_count()));
  EXPECT_EQ(get_num_threads(), 3);  // the limit stays what was set
  set_num_threads(1);
  EXPECT_EQ(usable_threads(), 1);
  set_adaptive_threads(was);
  set_num_threads(before);
}

// A CPU-bound child process beside this one: within a few looks the free cores drop below the
// budget, and ops start smaller teams. (Other tests running at once can only lower it further.)
TEST(FreeCores, ACompetingProcessTakesACore) {
  if (core_count() < 2) GTEST_SKIP() << "needs 2 cores, this process has " << core_count();
  const pid_t hog = fork();
  ASSERT_GE(hog, 0);
  if (hog == 0) {
    volatile unsigned long spins = 0;
    for (;;) {
      const unsigned long next = spins + 1;
      spins = next;
    }
  }
  const bool was = adaptive_threads();
  set_adaptive_threads(true);
  const int before = get_num_threads();
  set_num_threads(core_count());
  bool dropped = false;
  for (int look = 0; look < 40 && !dropped; ++look) {  // up to 10 s: the test host may be slow
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
    dropped = free_cores() < core_count() && usable_threads() < core_count();
  }
  kill(hog, SIGKILL);
  waitpid(hog, nullptr, 0);
  set_num_threads(before);
  set_adaptive_threads(was);
  EXPECT_TRUE(dropped) << "free_cores() stayed at " << core_count() << " beside a CPU-bound process";
}

}  // namespace
}  // namespace cohort
