// How many cores this process may really use: its affinity mask and its cgroup CPU quota.
//
//   std::cout << cohort::cpu_budget();
//   // 1 core: cgroup v1 CPU quota of 1 CPU (/sys/fs/cgroup/cpu/job: cpu.cfs_quota_us 100000 per
//   // cpu.cfs_period_us 100000); the affinity mask allows 2
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace cohort {

// A cgroup's CPU quota: `quota_us` of CPU time every `period_us`, i.e. quota_us / period_us CPUs.
struct CpuQuota {
  double cpus = 0;        // quota_us / period_us
  std::string version;    // "cgroup v1" or "cgroup v2"
  std::string directory;  // the cgroup directory whose limit is the tightest
  std::string setting;    // what that directory's files say, e.g. "cpu.max 50000 100000"
};

// The cores this process may use (Note [CPU budget] in src/core/cpu_budget.cpp).
struct CpuBudget {
  int affinity_cpus = 1;           // CPUs in the affinity mask (sched_getaffinity)
  std::optional<CpuQuota> quota;   // the tightest CPU quota of the process's cgroup and its ancestors
  int cores = 1;                   // min(affinity_cpus, ceil(quota)), at least 1: what core_count() returns
  std::string source() const;      // where `cores` came from, in a few words
};
std::ostream& operator<<(std::ostream& os, const CpuBudget& b);

// The budget now: the affinity mask is read at every call, the cgroup quota once per process.
CpuBudget cpu_budget();

namespace detail {
// The tightest CPU quota found by walking up from the process's cgroup, given the text of
// /proc/self/cgroup and /proc/self/mountinfo; the cgroup files are read under the mount points that
// mountinfo names. nullopt: no quota (or no cgroup filesystem).
std::optional<CpuQuota> cgroup_cpu_quota(const std::string& proc_self_cgroup, const std::string& mountinfo);
// Cores for an affinity count and a quota: min(affinity, ceil(quota cpus)), at least 1.
int budget_cores(int affinity_cpus, const std::optional<CpuQuota>& quota);
// The OS numbers of the CPUs in the affinity mask, in order (0 .. n-1 of the machine's when the mask
// cannot be read).
std::vector<int> affinity_cpus();
}  // namespace detail

}  // namespace cohort
