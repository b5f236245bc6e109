// `cohort launch`: the ranks' environment, prefixed output, a failing rank stopping the others, signals to
// the launcher, and usage errors. Ranks are /bin/sh scripts; the ones meant to be stopped sleep 30 s, so a
// broken launcher makes a test slow rather than hang it.
#include "app/launch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "cohort/core/device.h"

#include "app/cli.h"
#include "support/paths.h"

namespace fs = std::filesystem;
using cohort::app::launch;
using cohort::app::LaunchOptions;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::UnorderedElementsAre;
using namespace std::string_literals;

namespace {

struct Launched {
  int code;
  std::string out, err;
};

Launched run(const LaunchOptions& o) {
  std::ostringstream out, err;
  const int code = launch(o, out, err);
  return {code, out.str(), err.str()};
}

LaunchOptions shell(int nproc, const std::string& script) {
  LaunchOptions o;
  o.nproc_per_node = nproc;
  o.command = {"/bin/sh", "-c", script};
  return o;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// An empty directory for one test, removed at its end.
class TestDir {
 public:
  explicit TestDir(const std::string& name)
      : path_(fs::temp_directory_path() / ("cohort-launch-test-" + std::to_string(::getpid())) / name) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TestDir() {
    std::error_code ignored;
    fs::remove_all(path_.parent_path(), ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Alive and not a zombie: a rank whose launcher died is reaped by whoever adopts it, maybe never.
bool alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  const std::string stat = read_text("/proc/" + std::to_string(pid) + "/stat");
  const std::size_t paren = stat.rfind(')');
  return paren == std::string::npos || paren + 2 >= stat.size() || stat[paren + 2] != 'Z';
}

// The pids the ranks wrote into `dir`, one file each.
std::vector<pid_t> pids_in(const fs::path& dir) {
  std::vector<pid_t> pids;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().filename().string().rfind("pid", 0) == 0) pids.push_back(std::stoi(read_text(entry.path())));
  return pids;
}

bool wait_until(const std::function<bool()>& done, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// Sets (or unsets, with nullopt) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) ::setenv(name, value->c_str(), 1);
    else ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// The cohort binary running `launch <args>` as a child, its stdout and stderr in files of `dir`.
pid_t start_cohort_launch(const fs::path& dir, std::vector<std::string> args) {
  args.insert(args.begin(), {cohort::testing::cohort_binary(), "launch"});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string out = (dir / "out").string(), err = (dir / "err").string();
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (!std::freopen(out.c_str(), "w", stdout) || !std::freopen(err.c_str(), "w", stderr)) ::_exit(126);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

// Waits (up to a generous limit) for a child to end; returns its waitpid status, or -1 if it did not.
int wait_for_exit(pid_t pid) {
  int status = -1;
  if (!wait_until([&] { return ::waitpid(pid, &status, WNOHANG) == pid; }, std::chrono::seconds(60))) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return -1;
  }
  return status;
}

// A rank script: write its pid to dir/pid<RANK>, then replace the shell by `sleep 30` (same pid).
std::string record_pid_then_sleep(const fs::path& dir) {
  return "echo $$ > " + dir.string() + "/pid$RANK; exec sleep 30";
}

// Whether the files `names` in `dir` all exist and are not empty (a pid is written in full).
bool written(const fs::path& dir, const std::vector<std::string>& names) {
  std::error_code ec;
  return std::all_of(names.begin(), names.end(),
                     [&](const std::string& n) { return fs::file_size(dir / n, ec) > 0 && !ec; });
}

}  // namespace

TEST(LaunchEnv, EveryRankSeesItsRankAndTheJob) {
  LaunchOptions o = shell(3, "echo $RANK $LOCAL_RANK $WORLD_SIZE $LOCAL_WORLD_SIZE $GROUP_RANK $MASTER_ADDR "
                             "$MASTER_PORT $COHORT_STORE $OMP_NUM_THREADS $COHORT_TIMEOUT");
  o.nnodes = 2;
  o.node_rank = 1;
  o.master_addr = "10.0.0.7";
  o.master_port = 29555;
  o.store = "redis://10.0.0.7:6379";
  o.threads = 1;
  o.timeout = 90;
  const Launched r = run(o);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(lines_of(r.out), UnorderedElementsAre("[rank 3] 3 0 6 3 1 10.0.0.7 29555 redis://10.0.0.7:6379 1 90",
                                                    "[rank 4] 4 1 6 3 1 10.0.0.7 29555 redis://10.0.0.7:6379 1 90",
                                                    "[rank 5] 5 2 6 3 1 10.0.0.7 29555 redis://10.0.0.7:6379 1 90"));
  EXPECT_THAT(r.err, HasSubstr("OMP_NUM_THREADS=1 (from --threads)"));
}

TEST(LaunchEnv, SingleNodeGetsAFreePortAndATemporaryFileStore) {
  ScopedEnv no_omp("OMP_NUM_THREADS", std::nullopt);
  const Launched r = run(
      shell(2, "test -d \"${COHORT_STORE#file:}\" && echo $MASTER_ADDR $MASTER_PORT $COHORT_STORE $OMP_NUM_THREADS"));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  std::istringstream first(lines[0].substr(lines[0].find("] ") + 2));
  std::string addr, store;
  int port = 0, threads = 0;
  first >> addr >> port >> store >> threads;
  EXPECT_EQ(addr, "127.0.0.1");
  EXPECT_GE(port, 1);
  EXPECT_LE(port, 65535);
  EXPECT_EQ(threads, std::max(1, cohort::core_count() / 2));
  ASSERT_EQ(store.rfind("file:", 0), 0u) << store;
  EXPECT_FALSE(fs::exists(store.substr(5))) << "the temporary store outlived the launch";
  EXPECT_EQ(lines[0].substr(lines[0].find("] ")), lines[1].substr(lines[1].find("] ")));  // one job
}

TEST(LaunchEnv, OmpNumThreadsFromTheEnvironmentIsKeptUnlessThreadsIsGiven) {
  ScopedEnv omp("OMP_NUM_THREADS", "3");
  Launched r = run(shell(1, "echo $OMP_NUM_THREADS"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "[rank 0] 3\n");
  EXPECT_THAT(r.err, HasSubstr("OMP_NUM_THREADS=3 (from the environment)"));
  LaunchOptions o = shell(1, "echo $OMP_NUM_THREADS");
  o.threads = 2;
  r = run(o);
  EXPECT_EQ(r.out, "[rank 0] 2\n");
}

TEST(LaunchOutput, EachLineIsPrefixedOnItsOwnStream) {
  const Launched r = run(shell(2, "printf 'one\\ntwo\\n'; echo oops >&2; printf 'no newline'"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(lines_of(r.out),
              UnorderedElementsAre("[rank 0] one", "[rank 0] two", "[rank 0] no newline", "[rank 1] one",
                                   "[rank 1] two", "[rank 1] no newline"));
  // A rank's lines keep their order.
  const std::string out = r.out;
  EXPECT_LT(out.find("[rank 1] one"), out.find("[rank 1] two"));
  EXPECT_LT(out.find("[rank 1] two"), out.find("[rank 1] no newline"));
  EXPECT_EQ(out.back(), '\n');
  EXPECT_THAT(r.err, HasSubstr("[rank 0] oops\n"));
  EXPECT_THAT(r.err, HasSubstr("[rank 1] oops\n"));
}

TEST(LaunchOutput, LongLinesOfSeveralRanksNeverMix) {
  // 300000 bytes is several pipe buffers: each line arrives in many reads, interleaved between ranks.
  const Launched r = run(shell(3, "head -c 300000 /dev/zero | tr '\\0' $RANK; echo; echo end"));
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 6u);
  for (int rank = 0; rank < 3; ++rank) {
    const std::string prefix = "[rank " + std::to_string(rank) + "] ";
    EXPECT_EQ(std::count(lines.begin(), lines.end(), prefix + std::string(300000, static_cast<char>('0' + rank))), 1)
        << "rank " << rank;
    EXPECT_EQ(std::count(lines.begin(), lines.end(), prefix + "end"), 1);
  }
}

TEST(LaunchOutput, LinesLongerThanTheLimitAreSplitIntoPrefixedLines) {
  LaunchOptions o = shell(1, "head -c 2500 /dev/zero | tr '\\0' x; echo");
  o.max_line_bytes = 1000;
  const Launched r = run(o);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(lines_of(r.out), ElementsAre("[rank 0] " + std::string(1000, 'x'), "[rank 0] " + std::string(1000, 'x'),
                                           "[rank 0] " + std::string(500, 'x')));
}

TEST(LaunchOutput, CarriageReturnSegmentsAreWrittenWithTheirPrefix) {
  // tqdm's style: "\r" then the bar; a bare "\r" makes no empty segment; "\r\n" stays one line end.
  const Launched r = run(shell(1, "printf '\\r10%%\\r50%%\\r100%%\\n'; printf 'dos\\r\\n'"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "[rank 0] 10%\r[rank 0] 50%\r[rank 0] 100%\n[rank 0] dos\r\n");
}

TEST(LaunchOutput, BinaryBytesPassThroughUnchanged) {
  const Launched r = run(shell(1, "printf 'a\\000b\\001\\377c\\n\\033[1mbold\\033[0m'"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "[rank 0] a\0b\1\377c\n[rank 0] \033[1mbold\033[0m\n"s);
}

TEST(LaunchFailure, AFailingRankStopsTheOthersAndGivesItsExitCode) {
  const TestDir test_dir("fail");
  const fs::path& dir = test_dir.path();
  // Rank 1 fails once the others are running; they would sleep 30 s unless stopped.
  LaunchOptions o = shell(3, "if [ $RANK = 1 ]; then until [ -s " + dir.string() + "/pid0 ] && [ -s " + dir.string() +
                                 "/pid2 ]; do sleep 0.02; done; echo bye; exit 3; fi; " + record_pid_then_sleep(dir));
  const Launched r = run(o);
  EXPECT_EQ(r.code, 3);
  EXPECT_THAT(r.err, HasSubstr("launch: rank 1 (pid "));
  EXPECT_THAT(r.err, HasSubstr("error: launch: rank 1 exited with code 3, the first rank to fail"));
  EXPECT_EQ(r.out, "[rank 1] bye\n");
  const std::vector<pid_t> pids = pids_in(dir);
  EXPECT_EQ(pids.size(), 2u);
  for (pid_t pid : pids) EXPECT_FALSE(alive(pid)) << "rank process " << pid << " outlived the launch";
}

// Rank 1 is killed and rank 0, having lost it, exits with an error: when the launcher finds both dead
// at once (here it is stopped meanwhile), it names the killed rank as the cause, not the lower one.
TEST(LaunchFailure, ARankKilledByASignalIsNamedBeforeTheRanksThatFailedBecauseOfIt) {
  const TestDir test_dir("cause");
  const fs::path& dir = test_dir.path();
  const pid_t launcher = start_cohort_launch(
      dir, {"--nproc-per-node", "2", "--", "/bin/sh", "-c",
            "if [ $RANK = 0 ]; then echo $$ > " + dir.string() + "/pid0; until [ -e " + dir.string() +
                "/go ]; do sleep 0.01; done; exit 1; fi; " + record_pid_then_sleep(dir)});
  ASSERT_TRUE(wait_until([&] { return written(dir, {"pid0", "pid1"}); }, std::chrono::seconds(30)));
  const pid_t rank0 = std::stoi(read_text(dir / "pid0")), rank1 = std::stoi(read_text(dir / "pid1"));
  ::kill(launcher, SIGSTOP);
  ::kill(rank1, SIGKILL);
  std::ofstream(dir / "go") << "1";
  EXPECT_TRUE(wait_until([&] { return !alive(rank1) && !alive(rank0); }, std::chrono::seconds(30)));
  ::kill(launcher, SIGCONT);
  const int status = wait_for_exit(launcher);
  ASSERT_TRUE(WIFEXITED(status)) << read_text(dir / "err");
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGKILL);
  EXPECT_THAT(read_text(dir / "err"), HasSubstr("error: launch: rank 1 was killed by SIGKILL, the first rank to fail; "
                                                "rank 0 also exited with code 1"));
}

TEST(LaunchFailure, ARankKilledByASignalGivesOneTwentyEightPlusIt) {
  const TestDir test_dir("signal");
  const fs::path& dir = test_dir.path();
  const Launched r = run(shell(2, "if [ $RANK = 0 ]; then until [ -s " + dir.string() +
                                      "/pid1 ]; do sleep 0.02; done; kill -USR1 $$; fi; " +
                                      record_pid_then_sleep(dir)));
  EXPECT_EQ(r.code, 128 + SIGUSR1);
  EXPECT_THAT(r.err, HasSubstr("rank 0 was killed by SIGUSR1, the first rank to fail"));
  for (pid_t pid : pids_in(dir)) EXPECT_FALSE(alive(pid));
}

TEST(LaunchFailure, ARankIgnoringSigtermIsKilledAfterTheGracePeriod) {
  const TestDir test_dir("grace");
  const fs::path& dir = test_dir.path();
  // `trap '' TERM` survives exec, so rank 1's sleep ignores SIGTERM.
  LaunchOptions o = shell(2, "if [ $RANK = 0 ]; then until [ -s " + dir.string() +
                                 "/pid1 ]; do sleep 0.02; done; exit 4; fi; trap '' TERM; " +
                                 record_pid_then_sleep(dir));
  o.grace = 0.5;
  const Launched r = run(o);
  EXPECT_EQ(r.code, 4);
  EXPECT_THAT(r.err, HasSubstr("rank 1"));
  EXPECT_THAT(r.err, HasSubstr("after SIGTERM; sending SIGKILL"));
  for (pid_t pid : pids_in(dir)) EXPECT_FALSE(alive(pid));
}

TEST(LaunchRestarts, AFailedRankRestartsTheGroupUnderANewRunId) {
  ScopedEnv run_id("COHORT_RUN_ID", "job7");
  // In the first attempt rank 1 fails while rank 0 sleeps (it is stopped); the second attempt succeeds.
  LaunchOptions o = shell(2, "if [ $COHORT_RESTART_COUNT = 0 ]; then if [ $RANK = 1 ]; then exit 3; fi; exec sleep 30; "
                             "fi; echo $COHORT_RESTART_COUNT $TORCHELASTIC_RESTART_COUNT $COHORT_RUN_ID");
  o.max_restarts = 2;
  const Launched r = run(o);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(lines_of(r.out), UnorderedElementsAre("[rank 0] 1 1 job7-restart-1", "[rank 1] 1 1 job7-restart-1"));
  EXPECT_THAT(r.err, HasSubstr("launch: rank 1 failed (exited with code 3); restarting the group, attempt 2 of 3 "
                               "(run id job7-restart-1)\n"));
  EXPECT_THAT(r.err, Not(HasSubstr("error:")));
}

TEST(LaunchRestarts, AfterTheLastAttemptTheFailureIsTheLaunchersError) {
  LaunchOptions o = shell(2, "if [ $RANK = 0 ]; then exit 4; fi; exec sleep 30");
  o.max_restarts = 2;
  const Launched r = run(o);
  EXPECT_EQ(r.code, 4);
  EXPECT_THAT(r.err, HasSubstr("rank 0 failed (exited with code 4); restarting the group, attempt 2 of 3"));
  EXPECT_THAT(r.err, HasSubstr("rank 0 failed (exited with code 4); restarting the group, attempt 3 of 3"));
  EXPECT_THAT(r.err, HasSubstr("error: launch: rank 0 exited with code 4, the first rank to fail (attempt 3 of 3)\n"));
  EXPECT_THAT(r.err, Not(HasSubstr("attempt 4")));
}

TEST(LaunchRestarts, WithoutMaxRestartsAFailureEndsTheLaunch) {
  const Launched r = run(shell(1, "echo $COHORT_RESTART_COUNT; exit 5"));
  EXPECT_EQ(r.code, 5);
  EXPECT_EQ(r.out, "[rank 0] 0\n");
  EXPECT_THAT(r.err, Not(HasSubstr("restarting")));
  EXPECT_THAT(r.err, HasSubstr("error: launch: rank 0 exited with code 5, the first rank to fail\n"));
}

TEST(LaunchSignals, SigtermToTheLauncherIsForwardedToEveryRankAndItsChildren) {
  const TestDir test_dir("sigterm");
  const fs::path& dir = test_dir.path();
  // Each rank waits on a background sleep (its child, in its process group) and exits 0 on SIGTERM.
  const std::string script = "trap 'echo caught TERM; exit 0' TERM; sleep 30 & echo $! > " + dir.string() +
                             "/pid-sleep$RANK; echo $$ > " + dir.string() + "/pid$RANK; wait";
  const pid_t launcher = start_cohort_launch(
      dir, {"--nproc-per-node", "2", "--store", "file:" + (dir / "store").string(), "--", "/bin/sh", "-c", script});
  ASSERT_TRUE(wait_until([&] { return written(dir, {"pid0", "pid1"}); }, std::chrono::seconds(30)))
      << read_text(dir / "err");
  ASSERT_EQ(::kill(launcher, SIGTERM), 0);
  const int status = wait_for_exit(launcher);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  const std::string out = read_text(dir / "out"), err = read_text(dir / "err");
  EXPECT_THAT(out, HasSubstr("[rank 0] caught TERM\n"));
  EXPECT_THAT(out, HasSubstr("[rank 1] caught TERM\n"));
  EXPECT_THAT(err, HasSubstr("launch: got SIGTERM; forwarding it to the ranks"));
  EXPECT_THAT(err, HasSubstr("launch: stopped by SIGTERM"));
  const std::vector<pid_t> pids = pids_in(dir);
  EXPECT_EQ(pids.size(), 4u);
  // The ranks were reaped by the launcher. A sleep forked just before the SIGTERM may have missed it (sh
  // still held the trap); the launcher's final SIGKILL to each rank's group gets it, a moment later.
  for (pid_t pid : pids)
    EXPECT_TRUE(wait_until([&] { return !alive(pid); }, std::chrono::seconds(20)))
        << "process " << pid << " outlived the launch";
}

TEST(LaunchSignals, RanksDieWithASigkilledLauncher) {
  const TestDir test_dir("sigkill");
  const fs::path& dir = test_dir.path();
  const pid_t launcher = start_cohort_launch(
      dir, {"--nproc-per-node", "2", "--store", "file:" + (dir / "store").string(), "--", "/bin/sh", "-c",
            record_pid_then_sleep(dir)});
  ASSERT_TRUE(wait_until([&] { return written(dir, {"pid0", "pid1"}); }, std::chrono::seconds(30)))
      << read_text(dir / "err");
  ASSERT_EQ(::kill(launcher, SIGKILL), 0);
  wait_for_exit(launcher);
  const std::vector<pid_t> pids = pids_in(dir);
  EXPECT_EQ(pids.size(), 2u);
  for (pid_t pid : pids)
    EXPECT_TRUE(wait_until([&] { return !alive(pid); }, std::chrono::seconds(20)))
        << "rank process " << pid << " outlived its SIGKILLed launcher";
}

TEST(LaunchUsage, BadOptionsExitTwoWithAMessage) {
  auto expect_usage = [](LaunchOptions o, const std::string& message) {
    const Launched r = run(o);
    EXPECT_EQ(r.code, 2) << message;
    EXPECT_THAT(r.err, HasSubstr(message));
    EXPECT_EQ(r.out, "");
  };
  LaunchOptions ok = shell(1, "true");
  LaunchOptions o = ok;
  o.nproc_per_node = 0;
  expect_usage(o, "error: launch: --nproc-per-node must be at least 1, got 0");
  o = ok;
  o.nnodes = 2;
  o.node_rank = 2;
  expect_usage(o, "--node-rank must be in 0..1 with --nnodes 2, got 2");
  o = ok;
  o.master_port = 70000;
  expect_usage(o, "--master-port must be in 1..65535, got 70000");
  o = ok;
  o.nnodes = 2;
  o.store = "file:/shared";
  expect_usage(o, "--master-port is required with --nnodes 2");
  o.master_port = 29500;
  o.store = "";
  expect_usage(o, "--store is required with --nnodes 2");
  o = ok;
  o.store = "redis://host";
  expect_usage(o, "--store must be file:/path or redis://host:port, got 'redis://host'");
  o = ok;
  o.max_restarts = -1;
  expect_usage(o, "--max-restarts must be at least 0, got -1");
  // Thread and process counts past the limit (1024), refused before anything is forked.
  o = ok;
  o.nproc_per_node = 100000;
  expect_usage(o, "error: launch: --nproc-per-node must be at most 1024, got 100000");
  o = ok;
  o.threads = 100000;
  expect_usage(o, "launch: --threads must be at most 1024, got 100000");
  {
    ScopedEnv omp("OMP_NUM_THREADS", "999999");
    expect_usage(ok, "launch: $OMP_NUM_THREADS must be a thread count from 1 to 1024, got \"999999\"");
    o = ok;
    o.threads = 2;  // --threads replaces it
    EXPECT_EQ(run(o).code, 0);
  }
  o = ok;
  o.command.clear();
  expect_usage(o, "launch: no command to run; hint: cohort launch --nproc-per-node 2 -- <command> [args...]");
  o.command = {"/nonexistent/program"};
  expect_usage(o, "launch: cannot execute '/nonexistent/program': No such file or directory");
  o.command = {"no-such-program-anywhere"};
  expect_usage(o, "launch: cannot execute 'no-such-program-anywhere': No such file or directory (not found in PATH)");
}

TEST(LaunchUsage, ACommandTheKernelRefusesExitsTwo) {
  const TestDir test_dir("noexec");
  const fs::path& dir = test_dir.path();
  const fs::path plain = dir / "plain", garbage = dir / "garbage";
  std::ofstream(plain) << "echo hi\n";
  std::ofstream(garbage) << "\x7f" << "ELF but not really";
  fs::permissions(garbage, fs::perms::owner_all);
  LaunchOptions o = shell(2, "");
  o.command = {plain.string()};
  Launched r = run(o);
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("cannot execute '" + plain.string() + "': Permission denied"));
  o.command = {garbage.string()};  // passes access(X_OK); execve itself fails in the child
  r = run(o);
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("cannot execute '" + garbage.string() + "': Exec format error"));
}

TEST(LaunchCli, ParsesTheCommandAfterTheSeparator) {
  auto cli = [](std::vector<std::string> args) {
    args.insert(args.begin(), "cohort");
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    ::testing::internal::CaptureStdout();
    ::testing::internal::CaptureStderr();
    const int code = cohort::app::run_cli(static_cast<int>(argv.size()), argv.data());
    const std::string out = ::testing::internal::GetCapturedStdout();
    return std::make_tuple(code, out, ::testing::internal::GetCapturedStderr());
  };
  auto [code, out, err] = cli({"launch", "--nproc-per-node", "2", "--threads", "1", "--", "/bin/sh", "-c",
                               "echo $RANK of $WORLD_SIZE; exit 0", "-x"});
  EXPECT_EQ(code, 0) << err;
  EXPECT_THAT(lines_of(out), UnorderedElementsAre("[rank 0] 0 of 2", "[rank 1] 1 of 2"));
  std::tie(code, out, err) = cli({"launch", "--nproc-per-node", "2", "--", "/bin/sh", "-c", "exit 5"});
  EXPECT_EQ(code, 5);
  EXPECT_EQ(std::get<0>(cli({"launch", "--nproc-per-node", "0", "--", "true"})), 2);
  std::tie(code, out, err) = cli({"launch", "--nproc-per-node", "2"});
  EXPECT_EQ(code, 2);
  EXPECT_THAT(err, HasSubstr("no command to run"));
  EXPECT_EQ(std::get<0>(cli({"launch", "--", "true"})), 2);  // --nproc-per-node is required
  EXPECT_EQ(std::get<0>(cli({"launch", "--nproc-per-node", "two", "--", "true"})), 2);
}
