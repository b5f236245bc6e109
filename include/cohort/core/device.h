// Devices. A CPU device `cpu:i` is a virtual device: the machine's cores are partitioned among
// cpu:0 .. cpu:n-1 (see Note [CPU devices] in src/core/device.cpp). Only CPU exists today; the
// type stays open for other backends.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace cohort {

// CUDA is named so that libtorch programs choosing their device at run time compile
// (`cuda::is_available() ? kCUDA : kCPU`, core/libtorch_names.h); making a CUDA Device throws.
enum class DeviceType : int8_t { CPU, CUDA };
inline constexpr DeviceType kCPU = DeviceType::CPU;
inline constexpr DeviceType kCUDA = DeviceType::CUDA;

namespace detail {
[[noreturn]] void refuse_cuda_device();
}

class Device {
 public:
  Device(DeviceType type = kCPU, int index = 0) : type_(type), index_(index) {  // NOLINT: implicit like libtorch
    if (type == DeviceType::CUDA) detail::refuse_cuda_device();
  }
  // "cpu" (= cpu:0) or "cpu:3".
  Device(const std::string& spec);  // NOLINT
  Device(const char* spec) : Device(std::string(spec)) {}  // NOLINT

  DeviceType type() const { return type_; }
  int index() const { return index_; }
  bool is_cpu() const { return type_ == kCPU; }
  std::string str() const;

  friend bool operator==(Device a, Device b) { return a.type_ == b.type_ && a.index_ == b.index_; }
  friend bool operator!=(Device a, Device b) { return !(a == b); }
  friend bool operator<(Device a, Device b) {
    return a.type_ != b.type_ ? a.type_ < b.type_ : a.index_ < b.index_;
  }

 private:
  DeviceType type_;
  int index_;
};

std::ostream& operator<<(std::ostream& os, Device d);

// Number of CPU devices: $COHORT_CPU_DEVICES if set, else the number of cores available.
int device_count();
// Changes the number of CPU devices (before any parallel work starts; mainly for tests and demos).
// More devices than cores is allowed and warned about once.
void set_device_count(int n);
// The number of cores this process may use: its affinity mask, capped by its cgroup's CPU quota
// (cpu_budget() in cohort/core/cpu_budget.h says which and why).
int core_count();
// Throws DeviceError naming `op` when `d` does not exist.
void check_device(Device d, const char* op);

// What one device has: its cores and its memory (Note [Device properties] in src/core/device.cpp).
//
//   std::cout << cohort::device_properties("cpu:1");
//   // cpu:1: 1 core (cpu 1), 3.0 MiB in use (peak 12.5 MiB, 7 allocations, 8.0 MiB cached) of 15.6 GiB
//   //        shared by 2 devices
struct DeviceProperties {
  Device device;
  std::vector<int> cpus;   // the OS cpu numbers of the cores the device runs on (at least one)
  int shared_with = 0;     // how many other devices run on the same cores (0 unless devices > cores)
  double core_share = 0;   // cores().size() / (1 + shared_with), times quota / CPUs under a smaller cgroup
                           // CPU quota: what the device gets of the machine
  int64_t allocated_bytes = 0;  // memory in use and its peak, from the device's allocator (memory_stats)
  int64_t peak_bytes = 0;
  int64_t allocations = 0;
  int64_t cached_bytes = 0;     // free blocks its allocator keeps for reuse
  int64_t total_memory = 0;     // the memory it may use: the machine's RAM, shared by every CPU device

  int cores() const { return static_cast<int>(cpus.size()); }
};
std::ostream& operator<<(std::ostream& os, const DeviceProperties& p);

// The properties of `d` now (memory figures are a snapshot). Throws DeviceError when d does not exist.
DeviceProperties device_properties(Device d);

// Empty when `devices` are balanced; otherwise one line naming each device and its cores, for the
// imbalance warning of data parallelism: balanced means the largest core_share is at most 1.25
// times the smallest, and the same for total_memory (memory in use is not compared; see the Note).
std::string describe_imbalance(const std::vector<Device>& devices);
std::string describe_imbalance(const std::vector<DeviceProperties>& properties);

}  // namespace cohort
