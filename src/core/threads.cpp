// Intra-op thread count: a thin layer over OpenMP's per-thread setting, and the per-device shares.
//
// Note [Threads per device]
// Data-parallel replicas run at the same time, one thread per device, and each op inside them may
// start OpenMP threads of its own. To keep the total at most the core count, the cores are divided
// among the devices in use: divide_threads_among(devices) gives each core_count()/n threads, the
// first core_count()%n one more (at least 1: more devices than cores oversubscribe, as warned by
// set_device_count). The shares live in one table indexed by device, written by parallel_apply
// before every call and read by each device's executor thread before every job it runs (replicas'
// forward and the backward nodes of that device: Note [Device executor] in device_executor.cpp), so
// forward and backward use the same division. A device never divided gets core_count()/device_count().
// The table only applies to work running *for a device* on its executor's thread; the user's own
// thread keeps its get_num_threads() (the engine narrows it only while a backward spans several devices).
#include "cohort/core/threads.h"

#include <omp.h>

#include <array>
#include <atomic>
#include <iostream>
#include <system_error>

#include "cohort/core/error.h"

namespace cohort {

namespace {
constexpr int kMaxDevices = 4096;  // set_device_count's limit
std::array<std::atomic<int>, kMaxDevices>& shares() {
  static std::array<std::atomic<int>, kMaxDevices> table{};  // 0: never divided
  return table;
}
}  // namespace

int get_num_threads() { return omp_get_max_threads(); }

void set_num_threads(int n) {
  COHORT_CHECK(n >= 1, "set_num_threads: the thread count must be at least 1, got ", n);
  COHORT_CHECK(n <= kMaxThreads, "set_num_threads: the thread count must be at most ", kMaxThreads, ", got ", n,
               " (this machine has ", core_count(), " cores); hint: one thread per core is the fastest");
  static std::atomic<bool> warned{false};
  if (n > core_count() && !warned.exchange(true)) {
    std::cerr << "cohort: warning: " << n << " intra-op threads on " << core_count()
              << " cores; threads will compete for cores\n";
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
  return n > 0 ? n : std::max(1, core_count() / std::max(1, device_count()));
}

void divide_threads_among(const std::vector<Device>& devices) {
  if (devices.empty()) return;
  int cores = core_count(), n = static_cast<int>(devices.size());
  for (int k = 0; k < n; ++k) {
    int i = devices[k].index();
    COHORT_CHECK_AS(DeviceError, i >= 0 && i < kMaxDevices, "divide_threads_among: device ", devices[k],
                    " is out of range");
    shares()[i].store(std::max(1, cores / n + (k < cores % n ? 1 : 0)), std::memory_order_relaxed);
  }
}

}  // namespace cohort
