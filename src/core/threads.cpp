// Intra-op thread count: a thin layer over OpenMP's per-thread setting, and the per-device shares.
//
// Note [Threads per device]
// Data-parallel replicas run at the same time, one thread per device, and each op inside them may
// start OpenMP threads of its own. To keep the total at most the core count, the cores are divided
// among the devices in use: divide_threads_among(devices) gives each c/n threads, the first c%n one
// more (at least 1: more devices than cores oversubscribe, as warned by set_device_count), where c
// is the cores other processes leave free (free_cores(), Note [Threads on a busy machine] in
// free_cores.cpp; core_count() with adaptive threads off). The shares live in one table indexed by
// device, written by parallel_apply before every call and read by each device's executor thread
// before every job it runs (replicas' forward and the backward nodes of that device: Note [Device
// executor] in device_executor.cpp), so forward and backward use the same division. A device never divided gets c/device_count().
// The table only applies to work running *for a device* on its executor's thread; the user's own
// thread keeps its get_num_threads() (the engine narrows it only while a backward spans several devices).
//
// Note [Hand-off wait]
// A data-parallel step hands work between threads several times: the caller posts replica 1's
// forward to cpu:1's executor and waits for it, the backward engine posts cpu:1's nodes there and
// the caller waits for their gradients. A thread that sleeps on a condition variable takes tens of
// microseconds to wake on a VM (35 us median measured on the 2-vCPU machine), several times per
// step, and a small model's step is about a millisecond. One device with 2 OpenMP threads pays
// none of that: libgomp's workers spin for a while between parallel regions before they sleep. So
// cohort's waiting threads (an executor with no job, run_on_devices waiting for its replicas, the
// backward engine's caller waiting for ready nodes) do the same: spin for a bounded time, watching
// one atomic, then sleep on their condition variable as before. The budget follows the user's
// OMP_WAIT_POLICY, as libgomp's does:
//  - unset: 500 us, enough to bridge the boundary between two training steps: once a replica's
//    job is done, its executor waits while the caller gathers, sums the replicas' gradients, steps
//    the optimizer and takes the next batch (150-300 us in the main job with DataParallel::
//    forward_backward). With a 100 us budget the executor slept through that and the caller then
//    waited 230-280 us a step for the other replica's job; with 600 us or 1 ms, 140-170 us, and
//    the main job on 2 devices ran 6-13% faster (3 alternated rounds);
//  - ACTIVE: 1 ms;
//  - PASSIVE: no spinning at all, the thread sleeps at once;
// and, as libgomp throttles its spinning when threads outnumber the CPUs, no spinning when the
// devices outnumber the cores (their threads would spin on a core another one needs). After the
// first 20 us the spinning thread yields between looks (sched_yield): on an idle machine that
// returns at once, on a busy one it lets a runnable thread have the core (perhaps the very thread
// being waited for, which on 2 cores may be queued behind the spinner).
// And no spinning while other processes keep some of this process's cores busy (free_cores(), Note
// [Threads on a busy machine] in free_cores.cpp): a spinning thread then takes a core from a runnable
// one. Measured with other work at load 7-10 on 2 vCPUs, the main job on 2 devices ran at 10.3-10.9k
// images/s with the spin against 13.2-14.1k without (3 alternated rounds), so it is off there.
// The environment and the core count are read once per process, the device count at every wait,
// the other processes' use of the cores at most every 250 ms. The spin only watches: every hand-off
// still goes through the mutex and condition variable, so a wait that outlasts the budget behaves
// exactly as before.
#include "cohort/core/threads.h"

#include <omp.h>

#include <array>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <iostream>
#include <string>
#include <system_error>

#include "cohort/core/error.h"
#include "core/free_cores.h"
#include "core/wait_policy.h"

namespace cohort {

namespace {
constexpr int kMaxDevices = 4096;  // set_device_count's limit
std::array<std::atomic<int>, kMaxDevices>& shares() {
  static std::array<std::atomic<int>, kMaxDevices> table{};  // 0: never divided
  return table;
}

// The cores the devices' shares come from: those other processes leave free (Note [Threads on a busy
// machine]), or all of core_count() with adaptive threads off.
int cores_to_divide() { return adaptive_threads() ? free_cores() : core_count(); }

// Without OMP_NUM_THREADS, OpenMP starts as many threads as the affinity mask has CPUs; inside a
// cgroup CPU quota that is too many (Note [CPU budget] in cpu_budget.cpp). The thread that loads the
// library (a program's main thread) starts with core_count() instead. Other threads that never call
// set_num_threads keep OpenMP's count as their limit; with adaptive threads usable_threads() still
// keeps their teams within the budget.
[[maybe_unused]] const bool threads_from_budget = [] {
  if (std::getenv("OMP_NUM_THREADS") == nullptr && core_count() < omp_get_max_threads())
    omp_set_num_threads(core_count());
  return true;
}();
}  // namespace

int get_num_threads() { return omp_get_max_threads(); }

void set_num_threads(int n) {
  COHORT_CHECK(n >= 1, "set_num_threads: the thread count must be at least 1, got ", n);
  COHORT_CHECK(n <= kMaxThreads, "set_num_threads: the thread count must be at most ", kMaxThreads, ", got ", n,
               " (this machine has ", core_count(), " cores); hint: one thread per core is the fastest");
  static std::atomic<bool> warned{false};
  if (n > core_count() && !warned.exchange(true)) {
    std::cerr << "cohort: warning: " << n << " intra-op threads on " << core_count()
              << (core_count() == 1 ? " core" : " cores") << "; threads will compete for cores\n";
  }
  omp_set_num_threads(n);
}

std::thread start_thread(const std::string& what, std::function<void()> f) {
  try {
    return std::thread(std::move(f));
  } catch (const std::system_error& e) {
    throw Error("could not start " + what + ": " + e.code().message() +
                "; hint: the system limits threads per user (ulimit -u) and in all (/proc/sys/kernel/threads-max)");
  }
}

int device_num_threads(Device device) {
  int i = device.index();
  int n = (i >= 0 && i < kMaxDevices) ? shares()[i].load(std::memory_order_relaxed) : 0;
  return n > 0 ? n : std::max(1, cores_to_divide() / std::max(1, device_count()));
}

void divide_threads_among(const std::vector<Device>& devices) {
  if (devices.empty()) return;
  int cores = cores_to_divide(), n = static_cast<int>(devices.size());
  for (int k = 0; k < n; ++k) {
    int i = devices[k].index();
    COHORT_CHECK_AS(DeviceError, i >= 0 && i < kMaxDevices, "divide_threads_among: device ", devices[k],
                    " is out of range");
    shares()[i].store(std::max(1, cores / n + (k < cores % n ? 1 : 0)), std::memory_order_relaxed);
  }
}

}  // namespace cohort

namespace cohort::detail {

int64_t hand_off_spin_ns_for(const char* omp_wait_policy, int devices, int cores, bool cores_taken) {
  if (devices > cores || cores_taken) return 0;
  std::string policy;
  for (const char* c = omp_wait_policy; c && *c; ++c)
    if (!std::isspace(static_cast<unsigned char>(*c))) policy += static_cast<char>(std::tolower(*c));
  if (policy == "passive") return 0;
  if (policy == "active") return 1'000'000;
  return 500'000;
}

int64_t hand_off_spin_ns() {
  static const std::string policy = [] {
    const char* env = std::getenv("OMP_WAIT_POLICY");
    return std::string(env ? env : "");
  }();
  static const int cores = core_count();
  return hand_off_spin_ns_for(policy.c_str(), device_count(), cores, cores_taken_by_others());
}

}  // namespace cohort::detail
