// `cohort launch`: checks the options, starts the ranks, relays their output with a rank prefix, and
// stops them all when one fails or the launcher is signalled.
//
// Note [Launch: processes, signals and output]
// Processes. Each rank is forked and, before exec, put in a process group of its own (a signal to the
// group reaches what the rank started too, and a terminal's Ctrl-C reaches only the launcher, which forwards
// it once), given PR_SET_PDEATHSIG = SIGKILL (it dies with the launcher even when the launcher is SIGKILLed;
// getppid() catches a launcher that died before the prctl), stdin from /dev/null (a background process
// group reading the terminal would be stopped) and pipes for stdout and stderr. The command is looked up in
// PATH before forking so that the child only makes async-signal-safe calls (the launcher may have threads);
// an exec that fails anyway sends its errno back through a close-on-exec pipe.
// Stopping. The first rank seen to exit non-zero or by a signal is the failure: every other rank's group
// gets SIGTERM, then SIGKILL `grace` seconds later. SIGINT, SIGTERM and SIGHUP to the launcher are forwarded
// to every group the same way; a second one sends SIGKILL at once. Signals reach the loop through a
// self-pipe that wakes poll(). A rank's pipes are drained and closed once it has been reaped, so a
// background process still holding them cannot hang the launcher, and at the end anything left in a
// rank's group is killed. PDEATHSIG reaches the rank only: if the launcher is SIGKILLed, processes the
// rank started itself survive it.
// Output. Bytes pass through unchanged. A line goes out in one piece, "[rank K] " + line, on the launcher's
// stream of the same name, so lines of different ranks never mix; a partial last line gets a newline;
// a line longer than max_line_bytes is split into several prefixed lines. Progress bars: a '\r' that is
// not part of "\r\n" ends a segment, written as one piece with its own prefix and its '\r'. On a terminal the
// bar then redraws in place with its rank shown (ranks' bars share one line and take turns); in a log
// every redraw is a prefixed segment. The alternative of holding a bar until its '\n' shows nothing for a
// whole epoch. A segment is written when the byte after its '\r' arrives, so a bar shows one redraw late;
// its final state, ended by '\n', is never lost. (cohort's own bar prints plain lines when stderr is not a
// terminal, as under the launcher.) A rank's stdout and stderr are two pipes, so their relative order is
// not kept, as with torchrun.
//
// Note [Launch: restarts]
// With --max-restarts N, a job whose rank failed is started again, up to N times, as torchrun does: the
// failed attempt is stopped as above (every rank reaped), then every rank starts afresh. Each attempt
// meets under its own run id, "<id>-restart-<k>" for the k-th restart (<id>: COHORT_RUN_ID,
// TORCHELASTIC_RUN_ID or "default"), so keys a failed attempt left in the store cannot collide with the
// new one; the nodes of a job count their attempts alike, since a rank that fails makes the ranks of the
// other nodes fail too (their next collective), and so meet again under the same id. The ranks learn
// the attempt from COHORT_RESTART_COUNT (and torchrun's TORCHELASTIC_RESTART_COUNT): 0, then 1, 2, ...;
// `cohort train` resumes from its newest checkpoint when it is above 0, if that run was started by this
// launch: COHORT_JOB_ID, the same in every attempt and rank, says which launch a run belongs to (Note
// [Run directories] in run_dir.h). It is passed through when set; else on one node it is random, and on
// several it is made of what every node is given alike (run id, master address and port, store). An
// interrupted launcher and a command that cannot be executed are not restarted.
#include "app/launch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>

#include "cohort/core/device.h"
#include "cohort/core/threads.h"

#include "app/launch_output.h"
#include "app/launch_signals.h"
#include "app/run_dir.h"

extern char** environ;

namespace cohort::app {

namespace {

using Clock = std::chrono::steady_clock;
using namespace launch_detail;

// ---- checks and set-up before any process starts --------------------------------------------------------

bool parse_port(const std::string& text, int& port) {
  if (text.empty() || text.size() > 5 || text.find_first_not_of("0123456789") != std::string::npos) return false;
  port = std::stoi(text);
  return port >= 1 && port <= 65535;
}

bool valid_store(const std::string& store) {
  if (store.rfind("file:", 0) == 0) return store.size() > 5;
  if (store.rfind("redis://", 0) != 0) return false;
  const std::string rest = store.substr(8);
  const std::size_t colon = rest.rfind(':');
  int port = 0;
  return colon != std::string::npos && colon > 0 && parse_port(rest.substr(colon + 1), port);
}

// Ranks one launcher starts: a process each, forked at once, each with at least one thread and a
// connection to every other rank. The same bound as threads (kMaxThreads): a rank per hardware
// thread of the largest machines; more only compete for cores, and each costs a process.
constexpr int kMaxLocalRanks = kMaxThreads;

// $OMP_NUM_THREADS, which the ranks inherit unless --threads is given: "" when absent or a count from
// 1 to kMaxThreads, else what is wrong with it.
std::string omp_num_threads_error(const LaunchOptions& o) {
  const char* env = std::getenv("OMP_NUM_THREADS");
  if (o.threads > 0 || !env || !*env) return "";
  char* end = nullptr;
  const long n = std::strtol(env, &end, 10);
  if (*end == '\0' && n >= 1 && n <= kMaxThreads) return "";
  return "$OMP_NUM_THREADS must be a thread count from 1 to " + std::to_string(kMaxThreads) + ", got \"" + env +
         "\"; hint: unset it to divide the cores, or give --threads";
}

// The first thing wrong with the options, or "".
std::string usage_error(const LaunchOptions& o) {
  std::ostringstream e;
  if (o.nproc_per_node < 1) e << "--nproc-per-node must be at least 1, got " << o.nproc_per_node;
  else if (o.nproc_per_node > kMaxLocalRanks)
    e << "--nproc-per-node must be at most " << kMaxLocalRanks << ", got " << o.nproc_per_node << " (this machine has "
      << core_count() << " cores); hint: one rank per core at most, each with its share of the threads";
  else if (o.nnodes < 1) e << "--nnodes must be at least 1, got " << o.nnodes;
  else if (o.node_rank < 0 || o.node_rank >= o.nnodes)
    e << "--node-rank must be in 0.." << o.nnodes - 1 << " with --nnodes " << o.nnodes << ", got " << o.node_rank
      << "; hint: nodes are numbered from 0";
  else if (o.master_port < 0 || o.master_port > 65535)
    e << "--master-port must be in 1..65535, got " << o.master_port;
  else if (o.nnodes > 1 && o.master_port == 0)
    e << "--master-port is required with --nnodes " << o.nnodes << "; hint: the same free port on every node";
  else if (!o.store.empty() && !valid_store(o.store))
    e << "--store must be file:/path or redis://host:port, got '" << o.store << "'";
  else if (o.nnodes > 1 && o.store.empty())
    e << "--store is required with --nnodes " << o.nnodes
      << "; hint: file:/a/directory/every/node/shares, or redis://host:6379";
  // NaN fails every comparison, so each number is tested for what it must be, not for what it must not.
  else if (!(std::isfinite(o.timeout) && o.timeout >= 0))
    e << "--timeout must be a finite number of seconds, at least 0, got " << o.timeout;
  else if (o.threads < 0) e << "--threads must be at least 0 (0: divide the cores), got " << o.threads;
  else if (o.threads > kMaxThreads) e << "--threads must be at most " << kMaxThreads << ", got " << o.threads;
  else if (const std::string omp = omp_num_threads_error(o); !omp.empty()) e << omp;
  else if (!(std::isfinite(o.grace) && o.grace >= 0))
    e << "--grace must be a finite number of seconds, at least 0, got " << o.grace;
  else if (o.max_restarts < 0) e << "--max-restarts must be at least 0, got " << o.max_restarts;
  else if (o.command.empty() || o.command[0].empty())
    e << "no command to run; hint: cohort launch --nproc-per-node 2 -- <command> [args...]";
  return e.str().empty() ? "" : "launch: " + e.str();
}

// The file execve runs for `name`: `name` itself when it has a '/', else the first executable regular
// file of that name in PATH. "" and `error` set when there is none.
std::string resolve_command(const std::string& name, std::string& error) {
  auto fail = [&](int err) {
    error = "launch: cannot execute '" + name + "': " + std::strerror(err);
    return std::string();
  };
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : fail(errno);
  const char* path_env = std::getenv("PATH");
  std::stringstream dirs(path_env && *path_env ? path_env : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
    struct stat st {};
    if (::stat(candidate.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(candidate.c_str(), X_OK) == 0)
      return candidate;
  }
  fail(ENOENT);
  error += " (not found in PATH)";
  return "";
}

// A port nobody listens on now. Another program may take it before rank 0 binds it, as with torchrun's
// port 0; the ranks then fail to rendezvous and the launcher reports it.
int pick_free_port() {
  const int s = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof addr;
  int port = -1;
  if (::bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  ::close(s);
  return port;
}

// The single-node file store: a fresh directory, removed when the launch ends (not if it is SIGKILLed).
class TempStoreDir {
 public:
  bool create() {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/cohort-launch-XXXXXX";
    if (!::mkdtemp(templ.data())) return false;
    path_ = templ;
    return true;
  }
  ~TempStoreDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// OMP_NUM_THREADS for every rank, and where the number came from. An even split: ranks of a data-parallel
// job wait for each other, so a spare core given to one rank would not make the job faster.
std::pair<std::string, std::string> rank_threads(const LaunchOptions& o) {
  if (o.threads > 0) return {std::to_string(o.threads), "from --threads"};
  if (const char* env = std::getenv("OMP_NUM_THREADS"); env && *env) return {env, "from the environment"};
  const int cores = core_count();
  return {std::to_string(std::max(1, cores / o.nproc_per_node)),
          std::to_string(cores) + " cores / " + std::to_string(o.nproc_per_node) + " ranks"};
}

// The launcher's environment with `vars` set (replacing any inherited value).
std::vector<std::string> environment_with(const std::vector<std::pair<std::string, std::string>>& vars) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const std::string key = entry.substr(0, entry.find('='));
    if (std::none_of(vars.begin(), vars.end(), [&](const auto& v) { return v.first == key; })) env.push_back(entry);
  }
  for (const auto& [key, value] : vars) env.push_back(key + "=" + value);
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// ---- the running job ---------------------------------------------------------------------------------

// What the child needs between fork and exec, prepared beforehand (Note [Launch: processes, ...]).
struct ChildSetup {
  const char* path;
  char** argv;
  char** envp;
  int stdin_fd, stdout_fd, stderr_fd, status_fd;
  pid_t parent;
  const struct sigaction* old_actions;
  sigset_t old_mask;
};

void move_fd(int from, int to) {
  if (from == to) ::fcntl(to, F_SETFD, 0);  // keep it open across exec
  else ::dup2(from, to);
}

[[noreturn]] void exec_rank(const ChildSetup& s) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != s.parent) ::_exit(127);  // the launcher died before the prctl took effect
  move_fd(s.stdin_fd, 0);
  move_fd(s.stdout_fd, 1);
  move_fd(s.stderr_fd, 2);
  for (int i = 0; i < kHandledCount; ++i) ::sigaction(kHandledSignals[i], &s.old_actions[i], nullptr);
  ::sigprocmask(SIG_SETMASK, &s.old_mask, nullptr);
  ::execve(s.path, s.argv, s.envp);
  const int err = errno;
  [[maybe_unused]] ssize_t n = ::write(s.status_fd, &err, sizeof err);
  ::_exit(127);
}

struct Rank {
  int global = 0;  // RANK
  pid_t pid = -1;
  bool running = false;
  int status = 0;        // waitpid's, once reaped
  int fds[2] = {-1, -1};  // read ends of its stdout and stderr
  std::unique_ptr<LinePrefixer> lines[2];
};

class Job {
 public:
  // `last`: no restart follows if a rank fails, so the failure is reported as the launch's error.
  Job(const LaunchOptions& o, std::ostream& out, std::ostream& err, bool last)
      : o_(o), out_(out), err_(err), last_(last) {}
  ~Job() {
    for (Rank& r : ranks_) {
      if (r.running) {  // only after an internal failure (pipe, fork, poll): leave no orphan behind
        ::kill(-r.pid, SIGKILL);
        ::kill(r.pid, SIGKILL);
        ::waitpid(r.pid, &r.status, 0);
      }
      for (int& fd : r.fds)
        if (fd >= 0) ::close(fd);
    }
  }

  // A rank failed (not the launcher interrupted, not a command that cannot run): "rank R exited with ...".
  std::string failure() const {
    return first_failure_ ? "rank " + std::to_string(first_failure_->global) + " failed (" +
                                describe(first_failure_->status) + ")"
                          : "";
  }

  int run(const std::string& path, const std::vector<std::pair<std::string, std::string>>& vars) {
    SignalPipe signals;  // before the first fork, so no SIGCHLD is missed
    ranks_.resize(static_cast<std::size_t>(o_.nproc_per_node));
    for (int local = 0; local < o_.nproc_per_node; ++local) {
      Rank& r = ranks_[static_cast<std::size_t>(local)];
      r.global = o_.node_rank * o_.nproc_per_node + local;
      auto rank_vars = vars;
      rank_vars.insert(rank_vars.begin(), {{"RANK", std::to_string(r.global)}, {"LOCAL_RANK", std::to_string(local)}});
      if (const int err = spawn(r, path, environment_with(rank_vars), signals)) {
        err_ << "error: launch: cannot execute '" << o_.command[0] << "': " << std::strerror(err) << "\n";
        stopping_ = killed_ = true;  // the ranks already started are not failures to report
        signal_running(SIGKILL);
        while (std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& x) { return x.running; })) reap(true);
        return 2;
      }
    }
    loop(signals);
    for (const Rank& r : ranks_)
      if (r.pid > 0) ::kill(-r.pid, SIGKILL);  // anything a rank left behind in its group
    return report();
  }

 private:
  // Forks and execs one rank; returns 0, or the errno of its failed exec (that child has then exited).
  int spawn(Rank& r, const std::string& path, std::vector<std::string> env, const SignalPipe& signals) {
    std::vector<std::string> args = o_.command;
    std::vector<char*> argv = c_strings(args), envp = c_strings(env);
    int out[2], err[2], status[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0 || ::pipe2(status, O_CLOEXEC) != 0)
      throw std::runtime_error(std::string("launch: cannot create a pipe: ") + std::strerror(errno));
    const int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    ChildSetup setup{path.c_str(), argv.data(), envp.data(), devnull, out[1], err[1], status[1],
                     ::getpid(),   signals.old_actions(), {}};
    sigset_t all;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &setup.old_mask);  // no handler of ours may run in the child
    const pid_t pid = ::fork();
    if (pid == 0) exec_rank(setup);
    const int fork_errno = errno;
    ::pthread_sigmask(SIG_SETMASK, &setup.old_mask, nullptr);
    for (int fd : {out[1], err[1], status[1], devnull}) ::close(fd);
    r.fds[0] = out[0];
    r.fds[1] = err[0];
    if (pid < 0) {
      ::close(status[0]);
      throw std::runtime_error(std::string("launch: cannot fork: ") + std::strerror(fork_errno));
    }
    r.pid = pid;
    r.running = true;
    for (int s = 0; s < 2; ++s) {
      ::fcntl(r.fds[s], F_SETFL, O_NONBLOCK);
      r.lines[s] = std::make_unique<LinePrefixer>("[rank " + std::to_string(r.global) + "] ", s ? err_ : out_,
                                                  o_.max_line_bytes);
    }
    int exec_errno = 0;
    ssize_t got;
    do got = ::read(status[0], &exec_errno, sizeof exec_errno);
    while (got < 0 && errno == EINTR);
    ::close(status[0]);
    return got == static_cast<ssize_t>(sizeof exec_errno) ? exec_errno : 0;
  }

  void loop(SignalPipe& signals) {
    while (std::any_of(ranks_.begin(), ranks_.end(), [](const Rank& r) { return r.running; })) {
      std::vector<pollfd> fds{{signals.fd(), POLLIN, 0}};
      std::vector<std::pair<Rank*, int>> streams;
      for (Rank& r : ranks_)
        for (int s = 0; s < 2; ++s)
          if (r.fds[s] >= 0) {
            fds.push_back({r.fds[s], POLLIN, 0});
            streams.emplace_back(&r, s);
          }
      int timeout_ms = -1;
      if (stopping_ && !killed_)
        timeout_ms = static_cast<int>(std::max<int64_t>(
            0, std::chrono::duration_cast<std::chrono::milliseconds>(kill_at_ - Clock::now()).count() + 1));
      if (::poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR)
        throw std::runtime_error(std::string("launch: poll failed: ") + std::strerror(errno));
      for (int sig : signals.take())
        if (sig != SIGCHLD) on_launcher_signal(sig);
      for (std::size_t i = 1; i < fds.size(); ++i)
        if (fds[i].revents) pump(*streams[i - 1].first, streams[i - 1].second, false);
      reap(false);
      if (stopping_ && !killed_ && Clock::now() >= kill_at_) {
        for (const Rank& r : ranks_)
          if (r.running)
            err_ << "launch: rank " << r.global << " (pid " << r.pid << ") is still running " << o_.grace
                 << " s after " << signal_name(stop_signal_) << "; sending SIGKILL\n";
        signal_running(SIGKILL);
        killed_ = true;
      }
    }
  }

  // Reads what a stream has; `to_end` reads until it would block, then closes it (the rank has exited).
  void pump(Rank& r, int s, bool to_end) {
    char buf[65536];
    for (;;) {
      const ssize_t n = ::read(r.fds[s], buf, sizeof buf);
      if (n > 0) {
        r.lines[s]->feed(buf, static_cast<std::size_t>(n));
        if (to_end) continue;
        return;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN && !to_end) return;
      r.lines[s]->finish();  // end of file, an error, or a reaped rank's pipe held open by a leftover
      ::close(r.fds[s]);
      r.fds[s] = -1;
      return;
    }
  }

  // Collects exited ranks (waiting for one when `block`); the first failure stops the others.
  void reap(bool block) {
    std::vector<Rank*> failed;
    for (Rank& r : ranks_) {
      if (!r.running) continue;
      const pid_t got = ::waitpid(r.pid, &r.status, block ? 0 : WNOHANG);
      if (got == 0 || (got < 0 && errno == EINTR)) continue;
      r.running = false;
      for (int s = 0; s < 2; ++s)
        if (r.fds[s] >= 0) pump(r, s, true);
      if (!stopping_ && (WIFSIGNALED(r.status) || WEXITSTATUS(r.status) != 0)) failed.push_back(&r);
    }
    if (failed.empty()) return;
    // Ranks found dead in one sweep: one killed by a signal is named first, since the others that
    // fail with it have usually exited because they lost it (a peer's closed connection); then the
    // lowest rank.
    std::stable_partition(failed.begin(), failed.end(), [](const Rank* r) { return WIFSIGNALED(r->status); });
    first_failure_ = failed.front();
    also_failed_.assign(failed.begin() + 1, failed.end());
    err_ << "launch: rank " << first_failure_->global << " (pid " << first_failure_->pid << ") "
         << describe(first_failure_->status) << "; stopping the other ranks\n";
    begin_stop(SIGTERM);
  }

  void on_launcher_signal(int sig) {
    if (stopping_) {
      err_ << "launch: got " << signal_name(sig) << " while stopping; sending SIGKILL\n";
      signal_running(SIGKILL);
      killed_ = true;
      return;
    }
    interrupted_by_ = sig;
    err_ << "launch: got " << signal_name(sig) << "; forwarding it to the ranks\n";
    begin_stop(sig);
  }

  void begin_stop(int sig) {
    stopping_ = true;
    stop_signal_ = sig;
    kill_at_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o_.grace));
    signal_running(sig);
  }

  void signal_running(int sig) {
    for (const Rank& r : ranks_)
      if (r.running && ::kill(-r.pid, sig) != 0) ::kill(r.pid, sig);  // the group, else the rank alone
  }

  int report() {
    if (first_failure_) {
      const Rank& f = *first_failure_;
      if (!last_) return exit_code_of(f.status);  // launch() says that it restarts
      err_ << "error: launch: rank " << f.global << " " << describe(f.status) << ", the first rank to fail";
      for (const Rank* r : also_failed_) err_ << "; rank " << r->global << " also " << describe(r->status);
      if (o_.max_restarts > 0) err_ << " (attempt " << o_.max_restarts + 1 << " of " << o_.max_restarts + 1 << ")";
      err_ << "\n";
      return exit_code_of(f.status);
    }
    if (interrupted_by_) {
      err_ << "launch: stopped by " << signal_name(interrupted_by_) << "\n";
      return 128 + interrupted_by_;
    }
    return 0;
  }

  const LaunchOptions& o_;
  std::ostream& out_;
  std::ostream& err_;
  const bool last_;
  std::vector<Rank> ranks_;
  bool stopping_ = false, killed_ = false;
  int stop_signal_ = 0, interrupted_by_ = 0;
  Clock::time_point kill_at_;
  const Rank* first_failure_ = nullptr;
  std::vector<const Rank*> also_failed_;
};

}  // namespace

int launch(const LaunchOptions& o, std::ostream& out, std::ostream& err) {
  std::string error = usage_error(o);
  const std::string path = error.empty() ? resolve_command(o.command[0], error) : "";
  if (!error.empty()) {
    err << "error: " << error << "\n";
    return 2;
  }
  const int port = o.master_port ? o.master_port : pick_free_port();
  if (port <= 0) {
    err << "error: launch: cannot find a free port for MASTER_PORT: " << std::strerror(errno)
        << "; hint: pass --master-port\n";
    return 1;
  }
  TempStoreDir store_dir;
  if (o.store.empty() && !store_dir.create()) {
    err << "error: launch: cannot create a directory for the file store: " << std::strerror(errno)
        << "; hint: set TMPDIR, or pass --store file:/some/dir\n";
    return 1;
  }
  const std::string store = o.store.empty() ? "file:" + store_dir.path() : o.store;
  const auto [threads, threads_from] = rank_threads(o);
  std::vector<std::pair<std::string, std::string>> vars = {
      {"WORLD_SIZE", std::to_string(o.nnodes * o.nproc_per_node)},
      {"LOCAL_WORLD_SIZE", std::to_string(o.nproc_per_node)},
      {"GROUP_RANK", std::to_string(o.node_rank)},
      {"MASTER_ADDR", o.master_addr},
      {"MASTER_PORT", std::to_string(port)},
      {"COHORT_STORE", store},
      {"OMP_NUM_THREADS", threads}};
  if (o.timeout > 0) vars.emplace_back("COHORT_TIMEOUT", (std::ostringstream() << o.timeout).str());

  err << "launch: " << o.nproc_per_node << " rank" << (o.nproc_per_node > 1 ? "s" : "") << " of '" << o.command[0]
      << "' on node " << o.node_rank << " of " << o.nnodes << " (world size " << o.nnodes * o.nproc_per_node
      << "): MASTER_ADDR=" << o.master_addr << " MASTER_PORT=" << port << " COHORT_STORE=" << store
      << " OMP_NUM_THREADS=" << threads << " (" << threads_from << ")\n";
  if (std::atoi(threads.c_str()) * o.nproc_per_node > core_count())
    err << "launch: warning: " << o.nproc_per_node << " ranks with OMP_NUM_THREADS=" << threads
        << " need more than the " << core_count() << " cores; ranks will compete for cores\n";
  // Note [Launch: restarts]
  std::string run_id = "default";
  for (const char* name : {"TORCHELASTIC_RUN_ID", "COHORT_RUN_ID"})
    if (const char* id = std::getenv(name); id && *id) run_id = id;
  std::string job;
  if (const char* given = std::getenv("COHORT_JOB_ID"); given && *given) job = given;
  else if (o.nnodes > 1) job = run_id + "@" + o.master_addr + ":" + std::to_string(port) + " " + store;
  else job = new_run_id();
  vars.emplace_back("COHORT_JOB_ID", job);
  for (int attempt = 0;; ++attempt) {
    auto attempt_vars = vars;
    attempt_vars.emplace_back("COHORT_RESTART_COUNT", std::to_string(attempt));
    attempt_vars.emplace_back("TORCHELASTIC_RESTART_COUNT", std::to_string(attempt));
    if (attempt > 0) attempt_vars.emplace_back("COHORT_RUN_ID", run_id + "-restart-" + std::to_string(attempt));
    std::string failure;
    int code = 0;
    try {
      Job job(o, out, err, attempt == o.max_restarts);
      code = job.run(path, attempt_vars);
      failure = job.failure();
    } catch (const std::runtime_error& e) {  // a pipe, fork or poll failure: the machine, not the user
      err << "error: " << e.what() << "\n";
      return 1;
    }
    if (failure.empty() || attempt == o.max_restarts) return code;
    err << "launch: " << failure << "; restarting the group, attempt " << attempt + 2 << " of " << o.max_restarts + 1
        << " (run id " << run_id << "-restart-" << attempt + 1 << ")\n";
  }
}

CLI::App* add_launch_command(CLI::App& app, LaunchOptions& o) {
  CLI::App* cmd = app.add_subcommand("launch", "Start the ranks of a distributed job on this node, like torchrun");
  cmd->add_option("--nproc-per-node", o.nproc_per_node, "Ranks to start on this node")->required();
  cmd->add_option("--nnodes", o.nnodes, "Nodes in the job (WORLD_SIZE = nnodes * nproc-per-node)")
      ->capture_default_str();
  cmd->add_option("--node-rank", o.node_rank, "This node's number, 0 to nnodes-1")->capture_default_str();
  cmd->add_option("--master-addr", o.master_addr, "MASTER_ADDR given to the ranks")->capture_default_str();
  cmd->add_option("--master-port", o.master_port, "MASTER_PORT (default: a free port; required with --nnodes > 1)");
  cmd->add_option("--store", o.store,
                  "Rendezvous store, COHORT_STORE: file:/dir (a directory every node sees) or redis://host:port "
                  "(default on one node: a temporary directory, removed at the end)");
  cmd->add_option("--timeout", o.timeout, "COHORT_TIMEOUT: the ranks' rendezvous timeout in seconds (default: theirs)");
  cmd->add_option("--threads", o.threads,
                  "OMP_NUM_THREADS of each rank (default: OMP_NUM_THREADS if set, else cores / nproc-per-node)");
  cmd->add_option("--grace", o.grace, "Seconds between SIGTERM and SIGKILL when stopping ranks")
      ->capture_default_str();
  cmd->add_option("--max-restarts", o.max_restarts,
                  "When a rank fails, stop the group and start it again, up to this many times (cohort train "
                  "then resumes from its newest checkpoint)")
      ->capture_default_str();
  cmd->add_option("command", o.command, "The program to run and its arguments, after --");
  cmd->footer("Example: cohort launch --nproc-per-node 2 -- build/ddp_train --epochs 3");
  return cmd;
}

}  // namespace cohort::app
