// run_process: fork, exec, wait with a deadline; spawn_process: fork and exec.
#include "support/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <thread>

namespace cohort::testing {

namespace {

std::string text_of(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

Finished run_process(const std::vector<std::string>& argv, const std::filesystem::path& dir, const std::string& name,
                     std::chrono::seconds limit) {
  std::filesystem::create_directories(dir);
  const std::string out = (dir / (name + ".out")).string(), err = (dir / (name + ".err")).string();
  std::vector<std::string> args = argv;
  std::vector<char*> raw;
  for (auto& a : args) raw.push_back(a.data());
  raw.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls until exec
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0) ::_exit(126);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::execv(raw[0], raw.data());
    ::_exit(127);
  }
  Finished f;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      f.out = text_of(out), f.err = text_of(err);
      return f;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  f.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  f.out = text_of(out), f.err = text_of(err);
  return f;
}

pid_t spawn_process(const std::vector<std::string>& argv, const std::filesystem::path& log) {
  std::vector<std::string> args = argv;
  std::vector<char*> raw;
  for (auto& a : args) raw.push_back(a.data());
  raw.push_back(nullptr);
  std::filesystem::create_directories(log.parent_path());
  const std::string log_path = log.string();
  const pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls until exec
    const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) ::dup2(fd, 1), ::dup2(fd, 2);
    ::execv(raw[0], raw.data());
    ::_exit(127);
  }
  return pid;
}

}  // namespace cohort::testing
