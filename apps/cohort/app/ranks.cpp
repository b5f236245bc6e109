// The trainer's processes: see ranks.h.
#include "app/ranks.h"

#include <chrono>
#include <cstdlib>
#include <string>

#include "cohort/core/device.h"
#include "cohort/core/error.h"
#include "cohort/core/threads.h"
#include "cohort/distributed/init.h"
#include "cohort/ops/creation.h"

namespace cohort::app {

namespace {

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  COHORT_CHECK(*end == '\0' && n >= 1 && n <= 1 << 20, "cohort train: $", name, " must be a positive integer, got \"",
               v, "\"");
  return static_cast<int>(n);
}

// $COHORT_TIMEOUT (cohort launch --timeout): seconds, a fraction allowed, as milliseconds.
std::chrono::milliseconds env_timeout() {
  const char* v = std::getenv("COHORT_TIMEOUT");
  if (!v || !*v) return std::chrono::minutes(5);
  char* end = nullptr;
  const double seconds = std::strtod(v, &end);
  COHORT_CHECK(*end == '\0' && seconds >= 0.001 && seconds <= 1e7, "cohort train: $COHORT_TIMEOUT must be a number of "
               "seconds from 0.001 to 1e7, got \"", v, "\"");
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000 + 0.5));
}

}  // namespace

Ranks Ranks::from_environment() {
  Ranks r;
  // $COHORT_TIMEOUT: how long to wait for the other ranks and for each collective.
  if (env_int("WORLD_SIZE", 1) > 1) r.group_ = distributed::init_process_group(env_timeout());
  return r;
}

bool leader_by_environment() {
  const char* v = std::getenv("RANK");
  return !v || !*v || std::string(v) == "0";
}

int restart_count() {
  const char* v = std::getenv("COHORT_RESTART_COUNT");
  if (!v || !*v) return 0;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  COHORT_CHECK(*end == '\0' && n >= 0 && n <= 1 << 20,
               "cohort train: $COHORT_RESTART_COUNT must be a count from 0, got \"", v, "\"");
  return static_cast<int>(n);
}

void Ranks::barrier() const {
  if (group_) group_->barrier();
}

int threads_per_process(int requested) {
  if (requested > 0) return requested;
  if (const char* omp = std::getenv("OMP_NUM_THREADS"); omp && *omp) {
    const int n = env_int("OMP_NUM_THREADS", 1);
    COHORT_CHECK(n <= kMaxThreads, "cohort train: $OMP_NUM_THREADS must be at most ", kMaxThreads, " threads, got ", n,
                 "; hint: unset it for one thread per core (", core_count(), " here), or use --threads");
    return n;
  }
  return std::max(1, core_count() / env_int("LOCAL_WORLD_SIZE", 1));
}

}  // namespace cohort::app
