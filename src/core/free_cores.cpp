// The cores other processes leave to this one, measured as it runs, and the thread count that follows.
//
// Note [Threads on a busy machine]
// Every parallel region of an op ends in a barrier (libgomp's, or oneDNN's own spinning ones inside
// its kernels). When another process takes one of the cores, one of this process's threads waits in
// the run queue while the others spin at the barrier for it, op after op: on 2 vCPUs beside one
// CPU-bound process, LeNet on Fashion-MNIST trained at 338 images/s with 2 threads against 2287 with
// 1 (PyTorch 1.13: 91 against 1609); OMP_WAIT_POLICY=passive only brought it to 1291, because the
// cost is the lost core, not the spinning alone. A team of threads is only as fast as its slowest
// member, so it must be no larger than the cores nobody else wants.
//
// So cohort measures that, as the process runs: every 250 ms at most, the first thread that starts
// a parallel region reads the idle time of the CPUs in its affinity mask (/proc/stat; with a tickless
// kernel that time is exact, not sampled, but counted in 10 ms ticks, so an interval under 100 ms is
// not measured) and the CPU time of the whole process (CLOCK_PROCESS_CPUTIME_ID). Over the interval,
// cpus * wall - idle - own is the CPU time other processes used, stolen time of a virtual machine
// included; divided by the wall time, the number of cores they keep busy ("taken"). The first look
// is when the library loads, and until an interval can be measured the guess is the tasks runnable
// at that moment (procs_running) less the loading thread: a training run's first 250 ms beside a
// compiler are then not spent with a team too large (they cost a quarter of a 6400-image epoch). It is rounded with hysteresis: one more core counts as taken once
// the others use half a core more than counted (above that the lost barrier waits cost more than the
// extra thread gains), one fewer once they use 0.7 less, so that a load near a threshold does not flip
// the count at every look. free_cores() = min(core_count(), affinity CPUs - taken), at least 1; and
// usable_threads(), the team an op starts, is min(get_num_threads(), free_cores()).
//
// What is limited is the team inside one op, not the devices' threads: DataParallel's replicas still
// run at once, one thread each, beside other work. A replica has no barrier inside it, the step
// waits for the slower one only once, and its threads get their share of the machine. With the
// replicas run in turn on the caller's thread instead, LeNet on 2 devices trained at 14.4k and 11.3k
// images/s beside one and two CPU-bound processes, against 17.8k and 18.3k with them at once
// (Sapphire Rapids, 2 vCPUs, 6400 images, 3 rounds of bench/contention.sh; its noise is about 15%).
//
// get_num_threads() stays what the user set (as libtorch's does): the limit. When the other work
// ends, the next look gives the cores back. Several cohort processes on one machine (DDP ranks,
// two trainings) each see the others and settle on their shares. Measured alternatives (Zen 3 and
// Sapphire Rapids, 2 vCPUs, one CPU-bound `python3 -c 'while True: pass'` beside): BENCHMARKS.md,
// "Speed beside other work". The measurement costs one read of /proc/stat (about 10 us on 2 CPUs)
// every 250 ms of parallel work. COHORT_ADAPTIVE_THREADS=0 (or set_adaptive_threads(false)) keeps
// the team at get_num_threads() whatever the load: for measuring fixed thread counts, and for tests
// whose coverage needs every thread count they ask for.
#include <omp.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "cohort/core/cpu_budget.h"
#include "cohort/core/device.h"
#include "cohort/core/threads.h"
#include "core/free_cores.h"
#include "core/proc_files.h"

namespace cohort {

namespace detail {

int cores_taken_after(double others, int taken) {
  const int up = static_cast<int>(std::floor(others + 0.5));
  if (up > taken) return up;
  const int down = std::max(0, static_cast<int>(std::ceil(others - 0.3)));
  return down < taken ? down : taken;
}

double idle_seconds(const std::string& proc_stat, const std::vector<int>& cpus, long ticks_per_second) {
  std::vector<bool> wanted;
  for (int c : cpus) {
    if (c >= static_cast<int>(wanted.size())) wanted.resize(c + 1, false);
    wanted[c] = true;
  }
  std::istringstream in(proc_stat);
  std::string line;
  double ticks = 0;
  while (std::getline(in, line)) {
    if (line.compare(0, 3, "cpu") != 0 || line.size() < 4 || line[3] < '0' || line[3] > '9') continue;
    std::istringstream fields(line.substr(3));
    long long cpu, user, nice, system, idle, iowait = 0;
    if (!(fields >> cpu >> user >> nice >> system >> idle)) continue;
    fields >> iowait;  // a CPU waiting for I/O is free to run a thread
    if (cpu >= 0 && cpu < static_cast<long long>(wanted.size()) && wanted[cpu]) ticks += idle + iowait;
  }
  return ticks / static_cast<double>(ticks_per_second);
}

int procs_running(const std::string& proc_stat) {
  const size_t at = proc_stat.find("\nprocs_running ");
  return at == std::string::npos ? 0 : std::atoi(proc_stat.c_str() + at + 15);
}

}  // namespace detail

namespace {

constexpr int64_t kLookEveryNs = 250'000'000;
constexpr double kShortestInterval = 0.1;  // seconds: below it the ticks of /proc/stat are too coarse

int64_t coarse_now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &t);
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

double seconds_of(clockid_t clock) {
  timespec t;
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

bool adaptive_from_environment() {
  const char* env = std::getenv("COHORT_ADAPTIVE_THREADS");
  if (!env) return true;
  const std::string v(env);
  return !(v == "0" || v == "off" || v == "false" || v == "no");
}

std::atomic<bool>& adaptive_flag() {
  static std::atomic<bool> on{adaptive_from_environment()};
  return on;
}

// The measurement's state: written by one thread at a time (the one holding `looking`), published
// through `taken` and `free`.
struct Meter {
  std::mutex looking;
  std::atomic<int64_t> next_look_ns{0};
  std::atomic<int> taken{0};
  std::atomic<int> free{0};  // 0: not measured yet
  double last_wall = 0, last_idle = 0, last_own = 0;
  bool has_baseline = false;

  void look() {
    std::unique_lock<std::mutex> l(looking, std::try_to_lock);
    if (!l.owns_lock()) return;
    static const long ticks = std::max(1L, sysconf(_SC_CLK_TCK));
    const std::vector<int> cpus = detail::affinity_cpus();
    const double wall = seconds_of(CLOCK_MONOTONIC), own = seconds_of(CLOCK_PROCESS_CPUTIME_ID);
    const std::string stat = detail::read_text("/proc/stat");
    const double idle = detail::idle_seconds(stat, cpus, ticks);
    const int affinity = std::max<int>(1, static_cast<int>(cpus.size()));
    int t = taken.load(std::memory_order_relaxed);
    if (!has_baseline) {
      // No interval yet: the runnable tasks now, less this thread, are the first guess.
      t = std::clamp(detail::procs_running(stat) - 1, 0, affinity - 1);
      last_wall = wall, last_idle = idle, last_own = own, has_baseline = true;
    } else if (wall - last_wall >= kShortestInterval) {
      const double others =
          (affinity * (wall - last_wall) - (idle - last_idle) - (own - last_own)) / (wall - last_wall);
      t = std::min(affinity - 1, detail::cores_taken_after(std::max(0.0, others), t));
      last_wall = wall, last_idle = idle, last_own = own;
    }  // else too short to measure (/proc/stat counts in 10 ms ticks): keep the guess and the baseline
    taken.store(t, std::memory_order_relaxed);
    free.store(std::max(1, std::min(core_count(), affinity - t)), std::memory_order_relaxed);
  }
};

Meter& meter() {
  static Meter m;
  return m;
}

// The first look when the library loads: the interval to the first parallel op is then usually long
// enough to measure, and until then the runnable tasks are the guess.
[[maybe_unused]] const bool first_look = (meter().look(), true);

}  // namespace

int free_cores() {
  Meter& m = meter();
  const int64_t now = coarse_now_ns();
  int64_t next = m.next_look_ns.load(std::memory_order_relaxed);
  if (now >= next && m.next_look_ns.compare_exchange_strong(next, now + kLookEveryNs)) m.look();
  const int f = m.free.load(std::memory_order_relaxed);
  return f > 0 ? f : core_count();
}

int usable_threads() {
  const int n = omp_get_max_threads();
  if (n == 1 || !adaptive_flag().load(std::memory_order_relaxed)) return n;
  return std::min(n, free_cores());
}

void set_adaptive_threads(bool on) { adaptive_flag().store(on, std::memory_order_relaxed); }

bool adaptive_threads() { return adaptive_flag().load(std::memory_order_relaxed); }

namespace detail {
bool cores_taken_by_others() {
  free_cores();  // a look, if one is due
  return meter().taken.load(std::memory_order_relaxed) > 0;
}
}  // namespace detail

}  // namespace cohort
