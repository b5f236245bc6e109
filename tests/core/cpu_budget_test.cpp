// Finding the cgroup CPU quota (src/core/cpu_budget.cpp, Note [CPU budget]) on made-up cgroup trees:
// v1 and v2, a tighter ancestor, a container's own cgroup as the mount's root, no quota at all.
// tests/apps/cpu_quota_test.cpp runs the cohort program inside a real cgroup.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cohort/core/cpu_budget.h"
#include "cohort/core/device.h"

namespace cohort {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class CgroupTree : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("cohort-cpu-budget-test-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // Writes `text` to <root>/<path>, creating its directories.
  void write(const std::string& path, const std::string& text) {
    fs::create_directories((root_ / path).parent_path());
    std::ofstream(root_ / path) << text;
  }
  std::string at(const std::string& path) const { return (root_ / path).string(); }
  // A mountinfo line as the kernel writes it: id, parent, dev, root, mount point, options, "-", type, source, super options.
  std::string mount_line(const std::string& root, const std::string& point, const std::string& type,
                         const std::string& super) const {
    return "30 25 0:26 " + root + " " + point + " rw,nosuid,nodev,noexec,relatime shared:9 - " + type + " " + type +
           " " + super + "\n";
  }

  fs::path root_;
};

TEST_F(CgroupTree, V1QuotaOfTheProcesssCgroup) {
  write("cpu/job/cpu.cfs_quota_us", "150000\n");
  write("cpu/job/cpu.cfs_period_us", "100000\n");
  write("cpu/cpu.cfs_quota_us", "-1\n");
  write("cpu/cpu.cfs_period_us", "100000\n");
  const std::string mounts = mount_line("/", at("memory"), "cgroup", "rw,memory") +
                             mount_line("/", at("cpu"), "cgroup", "rw,cpu,cpuacct");
  auto q = detail::cgroup_cpu_quota("5:memory:/other\n3:cpu,cpuacct:/job\n", mounts);
  ASSERT_TRUE(q.has_value());
  EXPECT_DOUBLE_EQ(q->cpus, 1.5);
  EXPECT_EQ(q->version, "cgroup v1");
  EXPECT_EQ(q->directory, at("cpu/job"));
  EXPECT_EQ(q->setting, "cpu.cfs_quota_us 150000 per cpu.cfs_period_us 100000");
  EXPECT_EQ(detail::budget_cores(8, q), 2);  // rounded up: the partial core is used
  EXPECT_EQ(detail::budget_cores(1, q), 1);  // never more than the affinity mask allows
}

TEST_F(CgroupTree, V2TightestAncestorWins) {
  write("unified/a/cpu.max", "200000 100000\n");
  write("unified/a/b/cpu.max", "max 100000\n");
  write("unified/a/b/c/cpu.max", "300000 100000\n");
  const std::string mounts = mount_line("/", at("unified"), "cgroup2", "rw,nsdelegate");
  auto q = detail::cgroup_cpu_quota("0::/a/b/c\n", mounts);
  ASSERT_TRUE(q.has_value());
  EXPECT_DOUBLE_EQ(q->cpus, 2.0);
  EXPECT_EQ(q->version, "cgroup v2");
  EXPECT_EQ(q->directory, at("unified/a"));
  EXPECT_EQ(q->setting, "cpu.max 200000 100000");
  EXPECT_EQ(detail::budget_cores(64, q), 2);
}

// Inside a container the mount's root is the container's own cgroup: its files are at the mount point.
TEST_F(CgroupTree, AContainersCgroupIsTheMountsRoot) {
  write("fs/cgroup/cpu.max", "50000 100000\n");
  const std::string mounts = mount_line("/docker/abc", at("fs/cgroup"), "cgroup2", "rw");
  auto q = detail::cgroup_cpu_quota("0::/docker/abc\n", mounts);
  ASSERT_TRUE(q.has_value());
  EXPECT_DOUBLE_EQ(q->cpus, 0.5);
  EXPECT_EQ(detail::budget_cores(4, q), 1);  // at least one core
}

// A space in a mount point is written \040 in mountinfo.
TEST_F(CgroupTree, EscapedMountPoints) {
  write("with space/job/cpu.max", "100000 100000\n");
  const std::string mounts = mount_line("/", at("with\\040space"), "cgroup2", "rw");
  auto q = detail::cgroup_cpu_quota("0::/job\n", mounts);
  ASSERT_TRUE(q.has_value());
  EXPECT_DOUBLE_EQ(q->cpus, 1.0);
}

TEST_F(CgroupTree, NoQuotaAnywhere) {
  write("unified/job/cpu.max", "max 100000\n");
  write("cpu/cpu.cfs_quota_us", "-1\n");
  write("cpu/cpu.cfs_period_us", "100000\n");
  const std::string mounts =
      mount_line("/", at("unified"), "cgroup2", "rw") + mount_line("/", at("cpu"), "cgroup", "rw,cpu");
  EXPECT_FALSE(detail::cgroup_cpu_quota("1:cpu:/\n0::/job\n", mounts).has_value());
  EXPECT_FALSE(detail::cgroup_cpu_quota("", "").has_value());
  EXPECT_FALSE(detail::cgroup_cpu_quota("0::/job\n", "garbage line\n- - -\n").has_value());
  EXPECT_EQ(detail::budget_cores(6, std::nullopt), 6);
  EXPECT_EQ(detail::budget_cores(6, CpuQuota{1e12, "cgroup v1", "/", ""}), 6);  // a quota above the CPUs
}

// Hybrid hierarchies: the tighter of the v1 cpu controller's quota and v2's.
TEST_F(CgroupTree, TheTighterOfV1AndV2) {
  write("cpu/job/cpu.cfs_quota_us", "300000\n");
  write("cpu/job/cpu.cfs_period_us", "100000\n");
  write("unified/job/cpu.max", "100000 100000\n");
  const std::string mounts =
      mount_line("/", at("cpu"), "cgroup", "rw,cpu") + mount_line("/", at("unified"), "cgroup2", "rw");
  auto q = detail::cgroup_cpu_quota("2:cpu:/job\n0::/job\n", mounts);
  ASSERT_TRUE(q.has_value());
  EXPECT_EQ(q->version, "cgroup v2");
  EXPECT_DOUBLE_EQ(q->cpus, 1.0);
}

TEST(CpuBudget, CoreCountIsTheBudgetAndSaysWhereItCameFrom) {
  const CpuBudget b = cpu_budget();
  EXPECT_EQ(core_count(), b.cores);
  EXPECT_GE(b.cores, 1);
  EXPECT_LE(b.cores, b.affinity_cpus);
  std::ostringstream s;
  s << b;
  EXPECT_THAT(s.str(), HasSubstr(b.quota && b.cores < b.affinity_cpus ? "CPU quota" : "affinity mask"));
}

}  // namespace
}  // namespace cohort
