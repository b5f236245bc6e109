// The launcher's signals and exit statuses (Note [Launch: processes, signals and output] in
// launch.cpp): a self-pipe that turns SIGCHLD, SIGINT, SIGTERM and SIGHUP into bytes its poll loop
// reads, and the words and exit codes for how a rank ended.
#pragma once

#include <signal.h>

#include <string>
#include <vector>

namespace cohort::app::launch_detail {

inline constexpr int kHandledSignals[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP};
inline constexpr int kHandledCount = 4;

// "SIGTERM", or "signal 70" for one without a name.
std::string signal_name(int sig);
// How a waitpid() status ended: "exited with code 3" / "was killed by SIGUSR1".
std::string describe(int status);
// The shell's exit code for it: the code, or 128 + the signal.
int exit_code_of(int status);

// Installs the handlers for the duration of one launch (one launch at a time per process) and
// restores the previous ones when destroyed.
class SignalPipe {
 public:
  SignalPipe();
  ~SignalPipe();
  SignalPipe(const SignalPipe&) = delete;
  SignalPipe& operator=(const SignalPipe&) = delete;

  int fd() const { return fds_[0]; }  // readable when a signal came
  // The handlers found at construction, kHandledCount of them, in kHandledSignals' order: a child
  // restores them before exec.
  const struct sigaction* old_actions() const { return old_; }
  std::vector<int> take();  // the signals that came since the last call, in order

 private:
  int fds_[2] = {-1, -1};
  struct sigaction old_[kHandledCount] = {};
};

}  // namespace cohort::app::launch_detail
