// Runs one cohort_ddp_worker process per rank on 127.0.0.1 (a file store in a fresh temporary directory),
// waits for them with a deadline, kills what is left (no orphans), and returns each rank's exit status
// and output. Exec'd processes, so the test binary's threads do not matter.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "support/paths.h"

extern char** environ;

namespace cohort::testing {

struct RankRun {
  int exit_code = -1;    // -1: killed (by a signal, or by the deadline)
  bool timed_out = false;
  std::string output;    // stdout and stderr
};

struct Ranks {
  std::vector<RankRun> ranks;
  std::filesystem::path dir;  // the run's temporary directory (kept until the Ranks dies)
  bool all_ok() const {
    for (const RankRun& r : ranks)
      if (r.exit_code != 0) return false;
    return true;
  }
  std::string report() const {
    std::ostringstream os;
    for (size_t r = 0; r < ranks.size(); ++r)
      os << "--- rank " << r << ": exit " << ranks[r].exit_code << (ranks[r].timed_out ? " (deadline)" : "") << "\n"
         << ranks[r].output;
    return os.str();
  }
  ~Ranks() {
    std::error_code ec;
    if (!dir.empty()) std::filesystem::remove_all(dir, ec);
  }
};

// `wait_for`: the ranks whose end ends the run (default all); the others are then killed (a hung rank).
inline Ranks run_ranks(int world_size, const std::string& scenario, const std::map<std::string, std::string>& env = {},
                       std::vector<int> wait_for = {}, std::chrono::seconds deadline = std::chrono::seconds(60)) {
  Ranks out;
  char tmpl[] = "/tmp/cohort-dist-test-XXXXXX";
  out.dir = mkdtemp(tmpl);
  std::vector<pid_t> pids(world_size, -1);
  out.ranks.resize(world_size);
  for (int r = 0; r < world_size; ++r) {
    std::map<std::string, std::string> vars;
    for (char** e = environ; *e; ++e) {
      std::string kv = *e;
      size_t eq = kv.find('=');
      if (eq != std::string::npos) vars[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    vars["RANK"] = std::to_string(r);
    vars["WORLD_SIZE"] = std::to_string(world_size);
    vars["COHORT_STORE"] = "file:" + (out.dir / "store").string();
    vars["COHORT_TEST_OUT"] = out.dir.string();
    vars["COHORT_TEST_PARENT"] = std::to_string(getpid());
    vars["OMP_NUM_THREADS"] = "1";
    for (const auto& [k, v] : env) vars[k] = v;
    std::vector<std::string> strings;
    for (const auto& [k, v] : vars) strings.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (std::string& s : strings) envp.push_back(s.data());
    envp.push_back(nullptr);

    std::string log = (out.dir / ("rank" + std::to_string(r) + ".log")).string();
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    std::string binary = cohort::testing::ddp_worker();
    std::vector<char*> argv{binary.data(), const_cast<char*>(scenario.c_str()), nullptr};
    int rc = posix_spawn(&pids[r], binary.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) pids[r] = -1;
  }
  if (wait_for.empty())
    for (int r = 0; r < world_size; ++r) wait_for.push_back(r);

  auto reap = [&](int r, bool block) {
    int status = 0;
    if (pids[r] < 0 || waitpid(pids[r], &status, block ? 0 : WNOHANG) != pids[r]) return false;
    out.ranks[r].exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    pids[r] = -1;
    return true;
  };
  const auto end = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    bool waiting = false;
    for (int r : wait_for) waiting = (!reap(r, false) && pids[r] >= 0) || waiting;
    if (!waiting || std::chrono::steady_clock::now() > end) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (int r = 0; r < world_size; ++r) {
    if (pids[r] < 0 || reap(r, false)) continue;
    kill(pids[r], SIGKILL);
    reap(r, true);
    out.ranks[r].timed_out = true;
  }
  for (int r = 0; r < world_size; ++r) {
    std::ifstream in(out.dir / ("rank" + std::to_string(r) + ".log"));
    std::stringstream ss;
    ss << in.rdbuf();
    out.ranks[r].output = ss.str();
  }
  return out;
}

}  // namespace cohort::testing
