// `cohort launch --nnodes 2` on two machines. Each node runs in its own network namespace (the two joined
// by a veth pair, GLOO_SOCKET_IFNAME naming it), pid namespace (it cannot see the other node's processes,
// so failures are found over the network, as between real machines) and UTS namespace (its own host
// name); a Redis server from Debian, in node 0's namespace, is the rendezvous store. Checked: the run
// equals one process's, a node killed whole stops the other within seconds naming it, and a node that
// never comes is reported at the rendezvous timeout naming the missing ranks. Skipped where namespaces
// cannot be made (not root, no ip, unshare or redis-server). Everything a test makes is removed at its
// end, and anything left by a test process that died (its pid is in the namespaces' names) at the start.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "apps/same_run.h"
#include "support/paths.h"
#include "support/subprocess.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using ::testing::HasSubstr;

namespace {

const char* const kIp = "/usr/sbin/ip";
const char* const kUnshare = "/usr/bin/unshare";
const char* const kRedis = "/usr/bin/redis-server";
const char* const kNsPrefix = "cohort-test-";  // + <pid of the test process>-<node>

std::string text_of(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Runs a command through /bin/sh; returns its exit code and (in `output`) what it printed.
int shell(const std::string& command, std::string* output = nullptr) {
  FILE* p = ::popen((command + " 2>&1").c_str(), "r");
  if (!p) return -1;
  std::string text;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) text.append(buf, n);
  const int status = ::pclose(p);
  if (output) *output = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// A child process started with `argv`, stdout and stderr in `log`; it is SIGKILLed if the test process
// dies (PR_SET_PDEATHSIG), and by the destructor if still running.
class Child {
 public:
  Child(std::vector<std::string> argv, const fs::path& log) : log_(log) {
    std::vector<char*> raw;
    for (auto& a : argv) raw.push_back(a.data());
    raw.push_back(nullptr);
    const std::string path = log.string();
    const pid_t parent = ::getpid();
    pid_ = ::fork();
    if (pid_ == 0) {  // only async-signal-safe calls until exec
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(127);
      const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0) ::_exit(126);
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::execv(raw[0], raw.data());
      ::_exit(127);
    }
  }
  ~Child() { kill(); }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // Waits up to `limit` for the exit; its code (128 + signal when killed), or -1 if it is still running.
  int wait(std::chrono::milliseconds limit) {
    const auto until = Clock::now() + limit;
    while (running()) {
      if (Clock::now() > until) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return code_;
  }
  bool running() {
    int status = 0;
    if (pid_ > 0 && ::waitpid(pid_, &status, WNOHANG) == pid_) {
      code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      pid_ = -1;
    }
    return pid_ > 0;
  }
  void kill() {
    if (!running()) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    code_ = 128 + SIGKILL;
    pid_ = -1;
  }
  std::string output() const { return text_of(log_); }

 private:
  fs::path log_;
  pid_t pid_ = -1;
  int code_ = -1;
};

// Removes the namespaces of test processes that no longer run (a test killed before its clean-up).
// Deleting a namespace also deletes its end of the veth pair, and with it the other end.
void remove_stale_namespaces() {
  std::string list;
  if (shell(std::string(kIp) + " netns list", &list) != 0) return;
  std::istringstream lines(list);
  for (std::string name; lines >> name;) {
    if (name.rfind(kNsPrefix, 0) != 0) continue;
    const std::string rest = name.substr(std::string(kNsPrefix).size());
    const pid_t pid = std::atoi(rest.substr(0, rest.find('-')).c_str());
    if (pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH) shell(std::string(kIp) + " netns del " + name);
    std::getline(lines, name);  // "(id: N)" after the name
  }
}

// Two network namespaces joined by a veth pair: node k is 10.77.0.<k+1>/24 on interface `iface(k)`. The
// addresses are private to the pair, so concurrent tests (other processes) can use the same ones.
class Network {
 public:
  Network() : tag_(std::to_string(::getpid())) {}
  ~Network() {
    for (int k = 0; k < 2; ++k) shell(std::string(kIp) + " netns del " + ns(k));
  }
  std::string ns(int k) const { return kNsPrefix + tag_ + "-" + std::to_string(k); }
  std::string iface(int k) const { return "cht" + tag_ + (k ? "b" : "a"); }  // at most 15 characters
  static std::string address(int k) { return "10.77.0." + std::to_string(k + 1); }

  // Creates it; "" or what went wrong.
  std::string create() {
    const std::string ip = kIp;
    std::vector<std::string> steps = {ip + " netns add " + ns(0), ip + " netns add " + ns(1),
                                      ip + " link add " + iface(0) + " type veth peer name " + iface(1)};
    for (int k = 0; k < 2; ++k) {
      steps.push_back(ip + " link set " + iface(k) + " netns " + ns(k));
      steps.push_back(ip + " -n " + ns(k) + " addr add " + address(k) + "/24 dev " + iface(k));
      steps.push_back(ip + " -n " + ns(k) + " link set " + iface(k) + " up");
      steps.push_back(ip + " -n " + ns(k) + " link set lo up");
    }
    for (const std::string& step : steps) {
      std::string out;
      if (shell(step, &out) != 0) {
        shell(ip + " link del " + iface(0));  // if it was made but not moved into a namespace
        return step + ": " + out;
      }
    }
    return "";
  }

 private:
  std::string tag_;
};

class TwoMachines : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "two machines need network namespaces, which need root";
    for (const char* tool : {kIp, kUnshare, kRedis})
      if (::access(tool, X_OK) != 0)
        GTEST_SKIP() << tool << " is missing (apt-get install iproute2 util-linux redis-server)";
    if (std::string out; shell(std::string(kUnshare) + " --pid --fork --mount-proc --uts true", &out) != 0)
      GTEST_SKIP() << "cannot make pid and UTS namespaces here: " << out;
    remove_stale_namespaces();
    net_ = std::make_unique<Network>();
    if (const std::string error = net_->create(); !error.empty())
      GTEST_SKIP() << "cannot make network namespaces here: " << error;
    dir_ = fs::temp_directory_path() / ("cohort-two-machines-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    // A Redis server in node 0's namespace, as a real job would have one on some machine.
    redis_ = std::make_unique<Child>(
        std::vector<std::string>{kIp, "netns", "exec", net_->ns(0), kRedis, "--bind", Network::address(0), "--port",
                                 "6379", "--save", "", "--appendonly", "no", "--protected-mode", "no", "--dir",
                                 dir_.string()},
        dir_ / "redis.log");
    const auto until = Clock::now() + std::chrono::seconds(20);
    while (redis_->output().find("Ready to accept connections") == std::string::npos) {
      ASSERT_TRUE(redis_->running() && Clock::now() < until) << "redis-server did not start:\n" << redis_->output();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  void TearDown() override {
    nodes_.clear();  // SIGKILLs a node's unshare, and so (--kill-child) its whole pid namespace
    redis_.reset();
    net_.reset();
    if (!HasFailure() && !dir_.empty()) fs::remove_all(dir_);
  }

  std::string store() const { return "redis://" + Network::address(0) + ":6379"; }

  // The `cohort train` flags of the runs here; `out` is on the file system both nodes share.
  static std::vector<std::string> train(const fs::path& out, int epochs) {
    return {cohort::testing::cohort_binary(), "train", "--dataset", "synthetic", "--limit", "512", "--batch-size", "32", "--model",
            "lenet", "--lr", "0.05", "--epochs", std::to_string(epochs), "--workers", "0", "--threads", "1",
            "--log-every", "4", "--no-progress", "--out", out.string()};
  }

  // Starts node `k` of a 2-node job: `cohort launch` in its namespaces, host name cohort-node<k>.
  Child& start_node(int k, int nproc, const std::vector<std::string>& command, const std::string& run_id,
                    double timeout = 30) {
    std::vector<std::string> argv = {
        kIp, "netns", "exec", net_->ns(k), kUnshare, "--pid", "--fork", "--kill-child", "--mount-proc", "--uts",
        "/bin/sh", "-c", "hostname cohort-node" + std::to_string(k) + " && exec \"$@\"", "sh", "env",
        "GLOO_SOCKET_IFNAME=" + net_->iface(k), "COHORT_RUN_ID=" + run_id, cohort::testing::cohort_binary(), "launch",
        "--nproc-per-node", std::to_string(nproc), "--nnodes", "2", "--node-rank", std::to_string(k),
        "--master-addr", Network::address(0), "--master-port", "29500", "--store", store(), "--threads", "1",
        "--timeout", (std::ostringstream() << timeout).str(), "--"};
    argv.insert(argv.end(), command.begin(), command.end());
    nodes_.push_back(std::make_unique<Child>(argv, dir_ / ("node" + std::to_string(k) + "-" + run_id + ".log")));
    return *nodes_.back();
  }

  std::unique_ptr<Network> net_;
  fs::path dir_;
  std::unique_ptr<Child> redis_;
  std::vector<std::unique_ptr<Child>> nodes_;
};

}  // namespace

TEST_F(TwoMachines, TwoNodesGiveTheMetricsAndWeightsOfOneProcess) {
  const fs::path one = dir_ / "one", two = dir_ / "two";
  const cohort::testing::Finished single = cohort::testing::run_process(train(one, 2), dir_, "one");
  ASSERT_EQ(single.exit_code, 0) << single.err;
  Child& node0 = start_node(0, 1, train(two, 2), "same");
  Child& node1 = start_node(1, 1, train(two, 2), "same");
  const int code0 = node0.wait(std::chrono::seconds(120)), code1 = node1.wait(std::chrono::seconds(120));
  ASSERT_EQ(code0, 0) << node0.output();
  ASSERT_EQ(code1, 0) << node1.output();
  EXPECT_THAT(node0.output(), HasSubstr("[rank 0] epoch 2/2"));
  EXPECT_THAT(node0.output(), HasSubstr("COHORT_STORE=" + store()));
  cohort::testing::expect_same_run(one, two, 512);
}

TEST_F(TwoMachines, KillingANodeStopsTheOtherWithinSecondsNamingIt) {
  const fs::path out = dir_ / "run";
  Child& node0 = start_node(0, 1, train(out, 1000), "kill");
  Child& node1 = start_node(1, 1, train(out, 1000), "kill");
  const auto until = Clock::now() + std::chrono::seconds(60);
  while (node0.output().find("[rank 0] epoch 1/") == std::string::npos) {
    ASSERT_TRUE(node0.running() && node1.running() && Clock::now() < until) << node0.output() << node1.output();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  node1.kill();  // its launcher and ranks: the whole pid namespace
  const auto killed = Clock::now();
  const int code = node0.wait(std::chrono::seconds(30));
  const double seconds = std::chrono::duration<double>(Clock::now() - killed).count();
  const std::string err = node0.output();
  ASSERT_NE(code, -1) << "node 0 still runs 30 s after node 1 was killed:\n" << err;
  EXPECT_NE(code, 0) << err;
  EXPECT_LT(seconds, 5) << err;
  EXPECT_THAT(err, HasSubstr("lost the connection to host cohort-node1 (" + Network::address(1) + "), which runs rank 1"));
  EXPECT_THAT(err, HasSubstr("error: launch: rank 0 exited with code 1"));
  std::cout << "[ two      ] node 0 stopped " << seconds * 1000 << " ms after node 1 was killed\n";
}

TEST_F(TwoMachines, ANodeThatNeverComesIsReportedAtTheTimeoutNamingItsRanks) {
  // Node 1 alone, two ranks: Gloo bounded their wait for rank 0 by a fixed 30 s (Note [Rendezvous]).
  const auto start = Clock::now();
  Child& node1 = start_node(1, 2, train(dir_ / "run", 1), "alone", 2);
  const int code = node1.wait(std::chrono::seconds(40));
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const std::string err = node1.output();
  ASSERT_NE(code, -1) << err;
  EXPECT_NE(code, 0) << err;
  EXPECT_GE(seconds, 2) << err;
  EXPECT_LT(seconds, 10) << err;
  // The first of ranks 2 and 3 to give up is reported; the launcher then stops the other.
  EXPECT_THAT(err, HasSubstr(" of 4 through " + store() + " (run id \"alone\") failed within 2000 ms: ranks 0, 1 never arrived"));
  EXPECT_THAT(err, HasSubstr("error: launch: rank "));
  std::cout << "[ two      ] node 1 alone gave up after " << seconds << " s (timeout 2 s)\n";
}
