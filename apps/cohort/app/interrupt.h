// Ctrl-C and SIGTERM during `cohort train`: the first one asks the training loop to stop after the
// step in progress (it checkpoints, says how to resume and exits 128 + the signal); a second one ends
// the process at once, as if no handler were installed.
#pragma once

#include <stdexcept>
#include <string>

namespace cohort::app {

// Installs the handlers of SIGINT and SIGTERM for its lifetime and restores the previous ones after;
// clears any earlier request. One at a time.
class InterruptHandlers {
 public:
  InterruptHandlers();
  ~InterruptHandlers();
  InterruptHandlers(const InterruptHandlers&) = delete;
  InterruptHandlers& operator=(const InterruptHandlers&) = delete;
};

// The signal that asked training to stop (SIGINT or SIGTERM), 0 when none did. Async-signal-safe to
// set, cheap to read: the training loop reads it once per step.
int interrupt_requested();

// Thrown once training has stopped for a signal, after its checkpoint: the program prints what() and
// exits 128 + signal (130 for SIGINT, 143 for SIGTERM).
class Interrupted : public std::runtime_error {
 public:
  Interrupted(const std::string& message, int signal) : std::runtime_error(message), signal_(signal) {}
  int signal() const { return signal_; }

 private:
  int signal_;
};

}  // namespace cohort::app
