// Devices. A CPU device `cpu:i` is a virtual device: the machine's cores are partitioned among
// cpu:0 .. cpu:n-1 (see Note [CPU devices] in src/core/device.cpp). Only CPU exists today; the
// type stays open for other backends.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

namespace cohort {

enum class DeviceType : int8_t { CPU };
inline constexpr DeviceType kCPU = DeviceType::CPU;

class Device {
 public:
  Device(DeviceType type = kCPU, int index = 0) : type_(type), index_(index) {}  // NOLINT: implicit like libtorch
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
// The number of cores this process may use.
int core_count();
// Throws DeviceError naming `op` when `d` does not exist.
void check_device(Device d, const char* op);

}  // namespace cohort
