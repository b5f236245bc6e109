// Intra-op thread count: a thin layer over OpenMP's per-thread setting.
#include "cohort/core/threads.h"

#include <omp.h>

#include <atomic>
#include <iostream>

#include "cohort/core/device.h"
#include "cohort/core/error.h"

namespace cohort {

int get_num_threads() { return omp_get_max_threads(); }

void set_num_threads(int n) {
  COHORT_CHECK(n >= 1, "set_num_threads: the thread count must be at least 1, got ", n);
  static std::atomic<bool> warned{false};
  if (n > core_count() && !warned.exchange(true)) {
    std::cerr << "cohort: warning: " << n << " intra-op threads on " << core_count()
              << " cores; threads will compete for cores\n";
  }
  omp_set_num_threads(n);
}

}  // namespace cohort
