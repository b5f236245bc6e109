// Device properties: the partition of the cores among the devices, memory figures, printing, and
// the imbalance rule (describe_imbalance).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>

#include "cohort/core/cpu_budget.h"
#include "cohort/core/device.h"
#include "cohort/core/storage.h"
#include "cohort/ops/creation.h"
#include "support/error_of.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;

// Sets the device count for one test and restores it.
class DeviceCount {
 public:
  explicit DeviceCount(int n) : saved_(device_count()) { set_device_count(n); }
  ~DeviceCount() { set_device_count(saved_); }

 private:
  int saved_;
};

TEST(DeviceProperties, PartitionGivesEveryCoreToExactlyOneDevice) {
  const int cores = static_cast<int>(detail::affinity_cpus().size());  // partitioned, quota or not
  const CpuBudget budget = cpu_budget();
  const double quota = budget.quota && budget.quota->cpus < cores ? budget.quota->cpus / cores : 1.0;
  for (int n = 1; n <= cores; ++n) {
    DeviceCount count(n);
    std::set<int> seen;
    int smallest = cores, largest = 0;
    for (int i = 0; i < n; ++i) {
      DeviceProperties p = device_properties(Device(kCPU, i));
      EXPECT_EQ(p.device, Device(kCPU, i));
      EXPECT_EQ(p.shared_with, 0) << p;
      EXPECT_DOUBLE_EQ(p.core_share, p.cores() * quota);
      for (int c : p.cpus) EXPECT_TRUE(seen.insert(c).second) << "cpu " << c << " given twice, " << p;
      smallest = std::min(smallest, p.cores());
      largest = std::max(largest, p.cores());
    }
    EXPECT_EQ(static_cast<int>(seen.size()), cores) << n << " devices";
    EXPECT_LE(largest - smallest, 1) << n << " devices";
  }
}

TEST(DeviceProperties, MoreDevicesThanCoresShareCores) {
  const int cores = core_count(), n = 2 * cores + 1;
  DeviceCount count(n);
  std::vector<DeviceProperties> all;
  for (int i = 0; i < n; ++i) all.push_back(device_properties(Device(kCPU, i)));
  for (const DeviceProperties& p : all) {
    ASSERT_EQ(p.cores(), 1) << p;
    auto same = std::count_if(all.begin(), all.end(), [&](const auto& q) { return q.cpus == p.cpus; });
    EXPECT_EQ(p.shared_with, same - 1) << p;
    EXPECT_DOUBLE_EQ(p.core_share, 1.0 / static_cast<double>(same)) << p;
  }
  // cpu:0 shares its core with cpu:cores and cpu:2*cores, so it has a third of a core.
  EXPECT_EQ(all[0].shared_with, 2);
  EXPECT_EQ(all[0].cpus, all[static_cast<size_t>(cores)].cpus);
  std::ostringstream os;
  os << all[0];
  EXPECT_THAT(os.str(), HasSubstr("shared with 2 other devices"));
}

TEST(DeviceProperties, MemoryIsTheDeviceAllocatorsCount) {
  DeviceCount count(2);
  const Device d("cpu:1");
  DeviceProperties before = device_properties(d);
  Tensor x = empty({1000, 1000}, TensorOptions().device(d));  // 4 MB of float32
  DeviceProperties during = device_properties(d);
  EXPECT_EQ(during.allocated_bytes - before.allocated_bytes, 4'000'000);
  EXPECT_EQ(during.allocations - before.allocations, 1);
  EXPECT_GE(during.peak_bytes, during.allocated_bytes);
  EXPECT_EQ(during.allocated_bytes, memory_stats(d).allocated_bytes);
  EXPECT_GT(during.total_memory, 0);
  x = Tensor();
  DeviceProperties after = device_properties(d);
  EXPECT_EQ(after.allocated_bytes, before.allocated_bytes);
  EXPECT_GE(after.peak_bytes, before.allocated_bytes + 4'000'000);
}

TEST(DeviceProperties, PrintsCoresAndMemory) {
  DeviceCount count(1);
  Tensor x = empty({256, 1024}, TensorOptions().device("cpu:0"));
  std::ostringstream os;
  os << device_properties("cpu:0");
  EXPECT_THAT(os.str(), HasSubstr("cpu:0: " + std::to_string(core_count()) + (core_count() == 1 ? " core (cpu" : " cores (cpu")));
  EXPECT_THAT(os.str(), HasSubstr(" in use (peak "));
  EXPECT_THAT(os.str(), HasSubstr("shared by 1 devices"));
}

TEST(DeviceProperties, MissingDeviceIsAnError) {
  DeviceCount count(2);
  EXPECT_THAT(testing::error_of([] { device_properties("cpu:2"); }),
              HasSubstr("device_properties: device cpu:2 does not exist (2 CPU devices)"));
}

DeviceProperties with_share(int index, double share, int64_t memory = 1 << 30) {
  DeviceProperties p;
  p.device = Device(kCPU, index);
  p.core_share = share;
  p.total_memory = memory;
  return p;
}

TEST(DescribeImbalance, EqualOrCloseSharesAreBalanced) {
  EXPECT_EQ(describe_imbalance({with_share(0, 1), with_share(1, 1)}), "");
  EXPECT_EQ(describe_imbalance({with_share(0, 5), with_share(1, 4)}), "");  // 25% exactly
  EXPECT_EQ(describe_imbalance({with_share(0, 0.5), with_share(1, 0.5), with_share(2, 0.5)}), "");
  EXPECT_EQ(describe_imbalance(std::vector<DeviceProperties>{with_share(0, 3)}), "");
}

TEST(DescribeImbalance, NamesEveryDeviceAndItsCores) {
  std::string m = describe_imbalance({with_share(0, 0.5), with_share(1, 1), with_share(2, 0.5)});
  EXPECT_THAT(m, HasSubstr("devices differ by more than 25% in cores: cpu:0 has 0.5 cores, cpu:1 has 1 core, "
                           "cpu:2 has 0.5 cores; "));
  EXPECT_THAT(m, HasSubstr("hint: "));
  EXPECT_THAT(describe_imbalance({with_share(0, 4), with_share(1, 3)}), HasSubstr("cpu:0 has 4 cores, cpu:1 has 3 cores"));
  EXPECT_THAT(describe_imbalance({with_share(0, 1, 1 << 30), with_share(1, 1, 1 << 29)}),
              HasSubstr("in memory: cpu:0 has 1 core and 1.0 GiB, cpu:1 has 1 core and 512.0 MiB"));
}

TEST(DescribeImbalance, RealDevicesFollowThePartition) {
  const int cores = core_count();
  {
    DeviceCount count(cores);  // one core each
    EXPECT_EQ(describe_imbalance(std::vector<Device>{Device(kCPU, 0), Device(kCPU, cores - 1)}), "");
  }
  if (cores >= 2) {
    DeviceCount count(cores + 1);  // cpu:0 and cpu:<cores> share core 0; cpu:1 has core 1 alone
    EXPECT_THAT(describe_imbalance(std::vector<Device>{Device(kCPU, 0), Device(kCPU, 1)}),
                HasSubstr("cpu:0 has 0.5 cores, cpu:1 has 1 core"));
  } else {
    DeviceCount count(3);  // one core: every device has a third of it, which is balanced
    EXPECT_EQ(describe_imbalance(std::vector<Device>{Device(kCPU, 0), Device(kCPU, 2)}), "");
  }
}

}  // namespace
}  // namespace cohort
