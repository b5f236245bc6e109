// How cohort's own threads wait for each other: a bounded spin, then a sleep (not public API).
// Note [Hand-off wait] in threads.cpp says why, how long, and how OMP_WAIT_POLICY changes it.
#pragma once

#include <chrono>
#include <cstdint>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace cohort::detail {

// How long a waiting thread spins before it sleeps, in nanoseconds: 0 under OMP_WAIT_POLICY=passive,
// when the devices outnumber the cores, and while other processes keep some of the cores busy.
int64_t hand_off_spin_ns();
// The same for a given OMP_WAIT_POLICY value (null: unset), device count, core count, and whether
// other processes keep some of the cores busy.
int64_t hand_off_spin_ns_for(const char* omp_wait_policy, int devices, int cores, bool cores_taken);

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Past this much of its budget a spinning thread yields its core between looks (Note [Hand-off wait]).
constexpr int64_t kPureSpinNs = 20'000;

// Spins until `ready()` is true or the spin budget is spent; returns the last `ready()`. The caller
// then sleeps on its condition variable as before if it is false: spinning only saves the wake-up.
// `ready` must be cheap and lock-free (an atomic load).
template <class Ready>
bool spin_until(Ready ready) {
  if (ready()) return true;
  const int64_t budget = hand_off_spin_ns();
  if (budget <= 0) return false;
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      cpu_relax();
      if (ready()) return true;
    }
    const int64_t spent =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count();
    if (spent > budget) return ready();
    if (spent > kPureSpinNs) std::this_thread::yield();
  }
}

}  // namespace cohort::detail
