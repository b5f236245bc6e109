// Devices and their count.
//
// Note [CPU devices]
// cpu:0 .. cpu:n-1 are virtual devices that partition the machine's cores, so that data-parallel
// replicas run side by side on disjoint cores. n defaults to the number of cores this process may
// use (its affinity mask and cgroup CPU quota: Note [CPU budget] in cpu_budget.cpp) and is set by
// $COHORT_CPU_DEVICES or set_device_count(); more devices than cores is allowed
// (tests, demos of an 8-device tutorial) and warned about once.
//
// Note [Device properties]
// The partition is by count: with c cores (the process's affinity set, in OS order) and n <= c
// devices, cpu:i gets c/n consecutive cores, the first c%n devices one more; with n > c devices,
// cpu:i runs on core i%c and shares it with the other devices mapped there (core_share 1/k for k
// devices on a core); a cgroup CPU quota of q CPUs below c scales every share by q/c (the devices
// still run on all c cores, for q cores' worth of time). cohort does not pin threads to these cores; the partition is what the thread
// shares (Note [Threads per device]) are sized from. Memory in use is the device allocator's count
// (storage.h). The imbalance rule compares core_share and total_memory, not memory in use: the
// master's parameters live on cpu:0, so memory in use always differs and says nothing about how
// fast a device is; every CPU device may use all of the machine's RAM, so only a future device
// type with memory of its own can be unbalanced in memory.
#include "cohort/core/device.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <ostream>
#include <sstream>
#include <cstdio>
#include <string>
#include <thread>

#include "cohort/core/cpu_budget.h"
#include "cohort/core/error.h"
#include "cohort/core/storage.h"

namespace cohort {

namespace detail {
void refuse_cuda_device() {
  throw DeviceError("Device: CUDA devices do not exist in cohort, which runs on CPU devices (cpu:0 .. cpu:" +
                    std::to_string(device_count() - 1) + " here); hint: choose the device at run time with "
                    "cuda::is_available(), which is false, or use kCPU");
}
}  // namespace detail

Device::Device(const std::string& spec) : type_(kCPU), index_(0) {
  const std::string prefix = "cpu";
  COHORT_CHECK_AS(DeviceError, spec.rfind("cuda", 0) != 0, "Device: \"", spec, "\": CUDA devices do not exist in "
                  "cohort, which runs on CPU devices; hint: use \"cpu\" or \"cpu:<index>\"");
  COHORT_CHECK_AS(DeviceError, spec.rfind(prefix, 0) == 0,
                  "Device: expected \"cpu\" or \"cpu:<index>\", got \"", spec, "\"");
  std::string rest = spec.substr(prefix.size());
  if (rest.empty()) return;
  bool ok = rest.size() > 1 && rest[0] == ':' && rest.size() < 10 &&
            rest.find_first_not_of("0123456789", 1) == std::string::npos;
  COHORT_CHECK_AS(DeviceError, ok, "Device: expected \"cpu\" or \"cpu:<index>\", got \"", spec, "\"");
  index_ = std::stoi(rest.substr(1));
}

std::string Device::str() const { return "cpu:" + std::to_string(index_); }

std::ostream& operator<<(std::ostream& os, Device d) { return os << d.str(); }

int core_count() { return cpu_budget().cores; }

namespace {

int initial_device_count() {
  if (const char* env = std::getenv("COHORT_CPU_DEVICES")) {
    char* end = nullptr;
    long n = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && n >= 1 && n <= 4096) return static_cast<int>(n);
    std::cerr << "cohort: ignoring COHORT_CPU_DEVICES=\"" << env << "\" (expected an integer in [1, 4096])\n";
  }
  return core_count();
}

std::atomic<int>& device_count_ref() {
  static std::atomic<int> n{initial_device_count()};
  return n;
}

void warn_if_oversubscribed(int n) {
  static std::once_flag warned;
  if (n > core_count())
    std::call_once(warned, [n] {
      std::cerr << "cohort: warning: " << n << " CPU devices on " << core_count()
                << " cores; devices share cores and parallel speed-ups will not show\n";
    });
}

}  // namespace

int device_count() { return device_count_ref().load(std::memory_order_relaxed); }

void set_device_count(int n) {
  COHORT_CHECK_AS(DeviceError, n >= 1 && n <= 4096, "set_device_count: expected 1 to 4096 devices, got ", n);
  device_count_ref().store(n);
  warn_if_oversubscribed(n);
}

void check_device(Device d, const char* op) {
  COHORT_CHECK_AS(DeviceError, d.index() >= 0 && d.index() < device_count(), op, ": device ", d,
                  " does not exist (", device_count(), " CPU devices); hint: set COHORT_CPU_DEVICES or call cohort::set_device_count");
}

namespace {

std::string human_bytes(int64_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof(buf), u ? "%.1f %s" : "%.0f %s", v, units[u]);
  return buf;
}

void print_cpus(std::ostream& os, const std::vector<int>& cpus) {
  os << (cpus.size() == 1 ? "cpu " : "cpus ");
  bool consecutive = cpus.back() - cpus.front() + 1 == static_cast<int>(cpus.size());
  if (consecutive && cpus.size() > 2) {
    os << cpus.front() << '-' << cpus.back();
    return;
  }
  for (size_t i = 0; i < cpus.size(); ++i) os << (i ? "," : "") << cpus[i];
}

}  // namespace

DeviceProperties device_properties(Device d) {
  check_device(d, "device_properties");
  const std::vector<int> all = detail::affinity_cpus();
  const int c = static_cast<int>(all.size()), n = device_count(), i = d.index();
  DeviceProperties p;
  p.device = d;
  if (n <= c) {
    int start = i * (c / n) + std::min(i, c % n);
    p.cpus.assign(all.begin() + start, all.begin() + start + c / n + (i < c % n ? 1 : 0));
  } else {
    p.cpus = {all[i % c]};
    p.shared_with = n / c + (i % c < n % c ? 1 : 0) - 1;
  }
  p.core_share = static_cast<double>(p.cpus.size()) / (1 + p.shared_with);
  // A CPU quota smaller than the affinity set leaves each device that fraction of its cores.
  const CpuBudget budget = cpu_budget();
  if (budget.quota && budget.quota->cpus < c) p.core_share *= budget.quota->cpus / c;
  MemoryStats m = memory_stats(d);
  p.allocated_bytes = m.allocated_bytes;
  p.peak_bytes = m.peak_bytes;
  p.allocations = m.allocations;
  p.cached_bytes = m.cached_bytes;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  p.total_memory = pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : 0;
  return p;
}

std::ostream& operator<<(std::ostream& os, const DeviceProperties& p) {
  os << p.device << ": " << p.cores() << (p.cores() == 1 ? " core (" : " cores (");
  if (!p.cpus.empty()) print_cpus(os, p.cpus);
  os << ")";
  const double unquoted = static_cast<double>(p.cores()) / (1 + p.shared_with);
  if (p.shared_with > 0)
    os << " shared with " << p.shared_with << (p.shared_with == 1 ? " other device" : " other devices") << " ("
       << unquoted << " of a core)";
  if (p.core_share < unquoted) os << ", " << p.core_share << " of a core under the CPU quota";
  os << ", " << human_bytes(p.allocated_bytes) << " in use (peak " << human_bytes(p.peak_bytes) << ", "
     << p.allocations << (p.allocations == 1 ? " allocation, " : " allocations, ") << human_bytes(p.cached_bytes)
     << " cached)";
  if (p.total_memory > 0) os << " of " << human_bytes(p.total_memory) << " shared by " << device_count() << " devices";
  return os;
}

std::string describe_imbalance(const std::vector<DeviceProperties>& properties) {
  if (properties.size() < 2) return "";
  auto ratio = [&](auto field) {
    auto [lo, hi] = std::minmax_element(properties.begin(), properties.end(),
                                        [&](const auto& a, const auto& b) { return field(a) < field(b); });
    return field(*lo) > 0 ? static_cast<double>(field(*hi)) / static_cast<double>(field(*lo)) : 1.0;
  };
  double cores = ratio([](const DeviceProperties& p) { return p.core_share; });
  double memory = ratio([](const DeviceProperties& p) { return p.total_memory; });
  if (cores <= 1.25 && memory <= 1.25) return "";
  std::ostringstream os;
  os << "devices differ by more than 25% in " << (cores > 1.25 ? "cores" : "memory") << ":";
  for (const DeviceProperties& p : properties) {
    os << ' ' << p.device << " has " << p.core_share << (p.core_share == 1 ? " core" : " cores");
    if (memory > 1.25) os << " and " << human_bytes(p.total_memory);
    os << (&p == &properties.back() ? "" : ",");
  }
  os << "; the fastest will wait for the slowest at every step; hint: use devices with equal shares "
        "(a device count that divides the core count, or a multiple of it)";
  return os.str();
}

std::string describe_imbalance(const std::vector<Device>& devices) {
  std::vector<DeviceProperties> properties;
  for (Device d : devices) properties.push_back(device_properties(d));
  return describe_imbalance(properties);
}

}  // namespace cohort
