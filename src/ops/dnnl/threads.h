// How many OpenMP threads a oneDNN primitive is made and run with (Note [oneDNN threads]).
#pragma once

#include <omp.h>

#include <cstdint>

#include "cohort/core/threads.h"

namespace cohort::kernel {

// Note [oneDNN threads]
// oneDNN is built on OpenMP here: a primitive runs on omp_get_max_threads() of the calling thread,
// which it reads when the primitive is created (some kernels fix their split of the work then) and
// again when it runs, and a primitive must run on the thread count it was created for. Two rules
// follow. (1) Every cached primitive is keyed by its thread count too: a DataParallel replica
// thread's share of the cores changes with the devices in use (Note [Threads per device] in
// src/core/threads.cpp). (2) A primitive with little work is created and run on one thread:
// waking an OpenMP team and joining it costs microseconds on an idle machine and tens of them when
// the cores are busy, more than a small matmul takes (the einsum grouped linear of bench/workloads.cpp,
// 0.4 MFLOP per bmm, ran 3.4x slower with 2 threads than with 1). The thresholds come from bench
// runs on a 2-core Zen 4 EPYC; below them, one thread was never slower.

// Threads for a primitive doing `work` units when `grain` units pay for one more thread: 1 below
// 2 * grain, else the threads the calling thread may use now (usable_threads: Note [Threads on a busy
// machine] in src/core/free_cores.cpp).
inline int dnnl_threads_for(double work, double grain) {
  const int max_threads = usable_threads();  // fewer while other processes hold cores
  if (max_threads == 1 || work < 2 * grain) return 1;
  return max_threads;
}

// Sets this thread's OpenMP thread count for a scope (creating and running one primitive).
class DnnlThreadsGuard {
 public:
  explicit DnnlThreadsGuard(int threads) : previous_(omp_get_max_threads()) {
    if (threads != previous_) omp_set_num_threads(threads);
  }
  ~DnnlThreadsGuard() {
    if (omp_get_max_threads() != previous_) omp_set_num_threads(previous_);
  }
  DnnlThreadsGuard(const DnnlThreadsGuard&) = delete;
  DnnlThreadsGuard& operator=(const DnnlThreadsGuard&) = delete;

 private:
  int previous_;
};

}  // namespace cohort::kernel
