// The stop request of SIGINT / SIGTERM (interrupt.h): a flag the handler sets, the loop reads.
#include "app/interrupt.h"

#include <signal.h>

#include <atomic>

namespace cohort::app {

namespace {

// Lock-free, so the handler may store to it (a plain sig_atomic_t would do in one thread; the loop
// reads it from another than the one the kernel picks for the handler).
std::atomic<int> requested{0};
static_assert(std::atomic<int>::is_always_lock_free);

struct sigaction previous_int, previous_term;

void on_signal(int sig) {
  int none = 0;
  if (requested.compare_exchange_strong(none, sig)) return;
  // The second signal: what it would have done without us (the default ends the process by it).
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

InterruptHandlers::InterruptHandlers() {
  requested = 0;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // reads and writes in progress carry on; the loop checks between steps
  sigaction(SIGINT, &action, &previous_int);
  sigaction(SIGTERM, &action, &previous_term);
}

InterruptHandlers::~InterruptHandlers() {
  sigaction(SIGINT, &previous_int, nullptr);
  sigaction(SIGTERM, &previous_term, nullptr);
}

int interrupt_requested() { return requested.load(std::memory_order_relaxed); }

}  // namespace cohort::app
