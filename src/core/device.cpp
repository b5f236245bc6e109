// Devices and their count.
//
// Note [CPU devices]
// cpu:0 .. cpu:n-1 are virtual devices that partition the machine's cores, so that data-parallel
// replicas run side by side on disjoint cores. n defaults to the number of cores this process may
// use and is set by $COHORT_CPU_DEVICES or set_device_count(); more devices than cores is allowed
// (tests, demos of an 8-device tutorial) and warned about once.
#include "cohort/core/device.h"

#include <sched.h>

#include <atomic>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <ostream>
#include <string>
#include <thread>

#include "cohort/core/error.h"

namespace cohort {

Device::Device(const std::string& spec) : type_(kCPU), index_(0) {
  const std::string prefix = "cpu";
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

int core_count() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

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

}  // namespace cohort
