// The cohort program inside a real cgroup with a CPU quota of one core (Note [CPU budget] in
// src/core/cpu_budget.cpp): `cohort info` counts one core and says the quota is why, and `cohort train`
// runs one thread. Needs root and a writable cgroup cpu controller (v1 or v2); skips with a message
// otherwise.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>

#include "cohort/core/cpu_budget.h"
#include "run_cohort.h"
#include "support/paths.h"
#include "support/subprocess.h"

namespace {

namespace fs = std::filesystem;
using cohort::testing::Finished;
using cohort::testing::run_process;
using ::testing::HasSubstr;

bool write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

// A cgroup of its own with a quota of one CPU, removed at the end of the test.
class OneCpuCgroup {
 public:
  // nullopt with `why` set when no cgroup can be made here.
  static std::optional<fs::path> make(std::string& why, std::string& version) {
    if (::geteuid() != 0) {
      why = "not root";
      return std::nullopt;
    }
    std::ifstream mounts("/proc/self/mountinfo");
    std::string line;
    std::optional<fs::path> v1, v2;
    while (std::getline(mounts, line)) {
      std::istringstream words(line);
      std::vector<std::string> f;
      for (std::string w; words >> w;) f.push_back(w);
      size_t dash = 0;
      while (dash < f.size() && f[dash] != "-") ++dash;
      if (dash < 5 || dash + 3 > f.size()) continue;
      if (f[dash + 1] == "cgroup" && ("," + f[dash + 3] + ",").find(",cpu,") != std::string::npos) v1 = f[4];
      if (f[dash + 1] == "cgroup2") v2 = f[4];
    }
    const fs::path name = "cohort-quota-test-" + std::to_string(::getpid());
    if (v1) {
      fs::path dir = *v1 / name;
      std::error_code ec;
      fs::create_directory(dir, ec);
      if (!ec && write_file(dir / "cpu.cfs_period_us", "100000") && write_file(dir / "cpu.cfs_quota_us", "100000")) {
        version = "cgroup v1";
        return dir;
      }
      fs::remove(dir, ec);
    }
    if (v2) {
      std::ifstream controllers(*v2 / "cgroup.controllers");
      std::string list((std::istreambuf_iterator<char>(controllers)), {});
      if (list.find("cpu") != std::string::npos && write_file(*v2 / "cgroup.subtree_control", "+cpu")) {
        fs::path dir = *v2 / name;
        std::error_code ec;
        fs::create_directory(dir, ec);
        if (!ec && write_file(dir / "cpu.max", "100000 100000")) {
          version = "cgroup v2";
          return dir;
        }
        fs::remove(dir, ec);
      }
    }
    why = "no writable cgroup cpu controller (v1 mount: " + (v1 ? v1->string() : std::string("none")) +
          ", v2 mount: " + (v2 ? v2->string() : std::string("none")) + ")";
    return std::nullopt;
  }
};

// argv run as a process placed in `cgroup` before it starts.
std::vector<std::string> inside(const fs::path& cgroup, std::vector<std::string> argv) {
  std::vector<std::string> shell = {"/bin/sh", "-c", "echo $$ > \"$0/cgroup.procs\" && exec \"$@\"", cgroup.string()};
  shell.insert(shell.end(), argv.begin(), argv.end());
  return shell;
}

TEST(CpuQuota, TheProgramCountsTheQuotaNotTheCpus) {
  std::string why, version;
  const std::optional<fs::path> cgroup = OneCpuCgroup::make(why, version);
  if (!cgroup) GTEST_SKIP() << "cannot make a cgroup with a CPU quota: " << why;
  const fs::path dir = cohort::testing::fresh_test_dir("cpu-quota", "run");
  fs::create_directories(dir);

  const Finished info = run_process(inside(*cgroup, {cohort::testing::cohort_binary(), "info"}), dir, "info");
  const Finished train =
      run_process(inside(*cgroup, {cohort::testing::cohort_binary(), "train", "--dataset", "synthetic", "--limit", "256", "--batch-size",
                                   "32", "--model", "lenet", "--epochs", "1", "--no-progress", "--out",
                                   (dir / "train").string()}),
                  dir, "train");
  std::error_code ec;
  fs::remove(*cgroup, ec);  // empty again: both processes have exited

  EXPECT_EQ(info.exit_code, 0) << info.err;
  EXPECT_THAT(info.out, HasSubstr("cores:    1 core: " + version + " CPU quota of 1 CPU (" + cgroup->string()));
  EXPECT_THAT(info.out, HasSubstr("threads:  1 intra-op"));
  // One device, with the quota's core of time (on every CPU of the affinity mask).
  EXPECT_THAT(info.out, HasSubstr(cohort::detail::affinity_cpus().size() > 1 ? "devices:  1 (cpu:0, 1 core under the CPU quota;"
                                                                             : "devices:  1 (cpu:0, 1 core;"));
  EXPECT_EQ(train.exit_code, 0) << train.err;
  // The first line says how many threads train (the announce line).
  EXPECT_THAT(train.err.substr(0, train.err.find('\n')), HasSubstr(", 1 thread on cpu:0")) << train.err;
}

}  // namespace
