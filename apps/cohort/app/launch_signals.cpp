// The launcher's self-pipe for signals, and how a rank's exit status reads.
#include "app/launch_signals.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace cohort::app::launch_detail {

namespace {

int g_signal_write_fd = -1;

extern "C" void write_signal_to_pipe(int sig) {
  const int saved = errno;
  const unsigned char byte = static_cast<unsigned char>(sig);
  [[maybe_unused]] ssize_t n = ::write(g_signal_write_fd, &byte, 1);
  errno = saved;
}

}  // namespace

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

std::string describe(int status) {
  if (WIFSIGNALED(status)) return "was killed by " + signal_name(WTERMSIG(status));
  return "exited with code " + std::to_string(WEXITSTATUS(status));
}

int exit_code_of(int status) { return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status); }

SignalPipe::SignalPipe() {
  if (::pipe2(fds_, O_CLOEXEC | O_NONBLOCK) != 0)
    throw std::runtime_error(std::string("launch: cannot create a pipe: ") + std::strerror(errno));
  g_signal_write_fd = fds_[1];
  struct sigaction action {};
  action.sa_handler = write_signal_to_pipe;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART | SA_NOCLDSTOP;  // restart other threads' calls; stops are not exits
  for (int i = 0; i < kHandledCount; ++i) ::sigaction(kHandledSignals[i], &action, &old_[i]);
}

SignalPipe::~SignalPipe() {
  for (int i = 0; i < kHandledCount; ++i) ::sigaction(kHandledSignals[i], &old_[i], nullptr);
  g_signal_write_fd = -1;
  ::close(fds_[0]);
  ::close(fds_[1]);
}

std::vector<int> SignalPipe::take() {
  std::vector<int> signals;
  unsigned char buf[64];
  ssize_t n;
  while ((n = ::read(fds_[0], buf, sizeof buf)) > 0) signals.insert(signals.end(), buf, buf + n);
  return signals;
}

}  // namespace cohort::app::launch_detail
