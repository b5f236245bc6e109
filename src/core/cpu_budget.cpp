// The cores this process may use: the affinity mask and the cgroup CPU quota.
//
// Note [CPU budget]
// A container is often given "2 CPUs" as a CPU quota (docker --cpus, Kubernetes limits, systemd's
// CPUQuota) while its affinity mask still holds every CPU of the host. The quota is enforced as
// CPU time per period: N threads that each want a core spend the quota in 1/N of the period and
// then all wait, unscheduled, for the next one. A thread count above the quota buys no compute,
// and with OpenMP's barriers it costs much: a thread that runs out of quota mid-region leaves
// the others spinning or sleeping until the next period (LeNet on Fashion-MNIST under a 1-CPU
// quota trained 25x slower with 2 threads than with 1). So the cores cohort counts are
// min(affinity CPUs, ceil(quota)), as the Go, Java and .NET runtimes count them; rounding up, as
// they do, keeps a fractional quota's last partial core in use.
//
// Where the quota is: /proc/self/cgroup names the process's cgroup in each hierarchy (v1: one per
// controller set, the one whose list holds "cpu"; v2: the single "0::" line), /proc/self/mountinfo
// where that hierarchy is mounted and which part of it (a container sees its own cgroup as the
// mount's root). A cgroup is limited by its ancestors too, so the walk goes from the process's cgroup
// up to the mount point and keeps the tightest quota (v1: cpu.cfs_quota_us / cpu.cfs_period_us,
// -1 meaning none; v2: cpu.max, "max" meaning none). The quota is read once per process: the
// runtimes that re-read it do so for long-lived servers whose container is resized, which a
// training run is not; the affinity mask is read at every call (cheap, and taskset may change it).
#include "cohort/core/cpu_budget.h"

#include <sched.h>

#include <cmath>
#include <ostream>
#include <sstream>
#include <thread>
#include <vector>

#include "core/proc_files.h"

namespace cohort {

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) parts.push_back(part);
  return parts;
}

bool contains(const std::vector<std::string>& list, const std::string& item) {
  for (const std::string& s : list)
    if (s == item) return true;
  return false;
}

// mountinfo escapes a space in a path as \040 (and tab, newline, backslash alike).
std::string unescape_octal(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto digit = [&](size_t k) { return s[k] >= '0' && s[k] <= '7'; };
    if (s[i] == '\\' && i + 3 < s.size() && digit(i + 1) && digit(i + 2) && digit(i + 3)) {
      out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
      i += 3;
    } else {
      out += s[i];
    }
  }
  return out;
}

struct Mount {
  std::string root, point;
};

// The mount of the v1 hierarchy that holds the cpu controller (v1 = true) or of the v2 hierarchy.
std::optional<Mount> find_mount(const std::string& mountinfo, bool v1) {
  std::istringstream in(mountinfo);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::istringstream words(line);
    for (std::string w; words >> w;) f.push_back(w);
    size_t dash = 0;
    while (dash < f.size() && f[dash] != "-") ++dash;
    if (dash < 5 || dash + 3 > f.size()) continue;
    const std::string& fstype = f[dash + 1];
    const bool match = v1 ? fstype == "cgroup" && contains(split(f[dash + 3], ','), "cpu") : fstype == "cgroup2";
    if (match) return Mount{unescape_octal(f[3]), unescape_octal(f[4])};
  }
  return std::nullopt;
}

// The process's cgroup path in the v1 cpu hierarchy (v1 = true) or in the v2 hierarchy.
std::optional<std::string> find_cgroup(const std::string& proc_self_cgroup, bool v1) {
  std::istringstream in(proc_self_cgroup);
  std::string line;
  while (std::getline(in, line)) {
    const size_t a = line.find(':'), b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string id = line.substr(0, a), controllers = line.substr(a + 1, b - a - 1);
    const bool match = v1 ? contains(split(controllers, ','), "cpu") : id == "0" && controllers.empty();
    if (match) return line.substr(b + 1);
  }
  return std::nullopt;
}

std::optional<long long> parse_integer(const std::string& s) {
  std::istringstream in(s);
  long long v;
  if (!(in >> v)) return std::nullopt;
  return v;
}

// The quota set in one cgroup directory, if any.
std::optional<CpuQuota> quota_in(const std::string& dir, bool v1) {
  long long quota = 0, period = 0;
  std::string setting;
  if (v1) {
    auto q = parse_integer(detail::read_text(dir + "/cpu.cfs_quota_us"));
    auto p = parse_integer(detail::read_text(dir + "/cpu.cfs_period_us"));
    if (!q || !p || *q <= 0 || *p <= 0) return std::nullopt;  // -1: no quota
    quota = *q, period = *p;
    setting = "cpu.cfs_quota_us " + std::to_string(quota) + " per cpu.cfs_period_us " + std::to_string(period);
  } else {
    std::istringstream in(detail::read_text(dir + "/cpu.max"));
    std::string q;
    if (!(in >> q >> period) || q == "max" || period <= 0) return std::nullopt;
    auto parsed = parse_integer(q);
    if (!parsed || *parsed <= 0) return std::nullopt;
    quota = *parsed;
    setting = "cpu.max " + q + " " + std::to_string(period);
  }
  return CpuQuota{static_cast<double>(quota) / static_cast<double>(period), v1 ? "cgroup v1" : "cgroup v2", dir,
                  setting};
}

// The tightest quota from the process's cgroup up to the hierarchy's mount point.
std::optional<CpuQuota> tightest_quota(const std::string& proc_self_cgroup, const std::string& mountinfo, bool v1) {
  const std::optional<Mount> mount = find_mount(mountinfo, v1);
  const std::optional<std::string> path = find_cgroup(proc_self_cgroup, v1);
  if (!mount || !path) return std::nullopt;
  // The part of the path below the mount's root; a cgroup outside the mounted part is not visible.
  std::string rel;
  if (mount->root == "/") {
    rel = *path;
  } else if (path->compare(0, mount->root.size(), mount->root) == 0 &&
             (path->size() == mount->root.size() || (*path)[mount->root.size()] == '/')) {
    rel = path->substr(mount->root.size());
  }
  while (!rel.empty() && rel.back() == '/') rel.pop_back();
  std::optional<CpuQuota> best;
  for (;;) {
    std::optional<CpuQuota> q = quota_in(mount->point + rel, v1);
    if (q && (!best || q->cpus < best->cpus)) best = q;
    if (rel.empty()) break;
    rel.erase(rel.rfind('/'));
  }
  return best;
}

int affinity_count() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

std::string cpus_text(double cpus) {
  std::ostringstream s;
  if (cpus == std::floor(cpus)) {
    s << static_cast<long long>(cpus);
  } else {
    s.precision(2);
    s << std::fixed << cpus;
  }
  s << (cpus == 1 ? " CPU" : " CPUs");
  return s.str();
}

}  // namespace

namespace detail {

std::optional<CpuQuota> cgroup_cpu_quota(const std::string& proc_self_cgroup, const std::string& mountinfo) {
  std::optional<CpuQuota> v1 = tightest_quota(proc_self_cgroup, mountinfo, true);
  std::optional<CpuQuota> v2 = tightest_quota(proc_self_cgroup, mountinfo, false);
  if (v1 && v2) return v1->cpus <= v2->cpus ? v1 : v2;
  return v1 ? v1 : v2;
}

std::vector<int> affinity_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  if (cpus.empty())
    for (int c = 0; c < affinity_count(); ++c) cpus.push_back(c);
  return cpus;
}

int budget_cores(int affinity_cpus, const std::optional<CpuQuota>& quota) {
  int cores = std::max(1, affinity_cpus);
  // Clamped before the cast: a quota may allow billions of CPUs (a huge quota over a short period).
  if (quota) cores = std::max(1, static_cast<int>(std::ceil(std::min<double>(quota->cpus, cores) - 1e-9)));
  return cores;
}

}  // namespace detail

std::string CpuBudget::source() const {
  std::ostringstream s;
  if (quota && cores < affinity_cpus) {
    s << quota->version << " CPU quota of " << cpus_text(quota->cpus) << " (" << quota->directory << ": "
      << quota->setting << "); the affinity mask allows " << affinity_cpus;
  } else {
    s << "the affinity mask (" << affinity_cpus << (affinity_cpus == 1 ? " CPU)" : " CPUs)");
    if (quota)
      s << "; the " << quota->version << " CPU quota of " << cpus_text(quota->cpus) << " (" << quota->directory
        << ") allows as many";
    else
      s << "; no cgroup CPU quota";
  }
  return s.str();
}

std::ostream& operator<<(std::ostream& os, const CpuBudget& b) {
  return os << b.cores << (b.cores == 1 ? " core: " : " cores: ") << b.source();
}

CpuBudget cpu_budget() {
  static const std::optional<CpuQuota> quota =
      detail::cgroup_cpu_quota(detail::read_text("/proc/self/cgroup"), detail::read_text("/proc/self/mountinfo"));
  CpuBudget b;
  b.affinity_cpus = affinity_count();
  b.quota = quota;
  b.cores = detail::budget_cores(b.affinity_cpus, quota);
  return b;
}

}  // namespace cohort
