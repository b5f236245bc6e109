// A test fixture with `n` virtual CPU devices (cpu:0 .. cpu:n-1), restoring the count afterwards.
#pragma once

#include <gtest/gtest.h>

#include <vector>

#include "cohort/core/device.h"

namespace cohort::testing {

// The first n CPU devices.
inline std::vector<Device> first_devices(int n) {
  std::vector<Device> d;
  for (int i = 0; i < n; ++i) d.emplace_back(kCPU, i);
  return d;
}

template <int N>
class WithDevices : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = device_count();
    set_device_count(N);
  }
  void TearDown() override { set_device_count(saved_); }
  static std::vector<Device> first(int n) { return first_devices(n); }

 private:
  int saved_ = 1;
};

}  // namespace cohort::testing
