// parallel_apply's runner: jobs on device threads, the caller's thread-local state carried over,
// every failure collected into one error.
//
// Note [Replica RNG]
// A replica that draws random numbers (dropout, randn in forward) must not share the caller's
// generator: the draws of concurrent replicas would interleave in an order set by the scheduler,
// so runs would not repeat. Each replica thread gets a generator of its own (ThreadGeneratorScope)
// seeded with mix(base, r), where base is ONE draw from the caller's default generator, taken the
// first time any replica needs randomness. So: (1) the same seed, devices and batch give the same
// masks on every run, whatever the thread timing; (2) a forward that draws nothing (no dropout) does
// not touch the caller's stream, so data drawn after it matches single-device training exactly;
// (3) masks depend on the split (replica r's stream depends on r). Masks independent of the split
// would need a counter-based generator keyed by (seed, sample index, layer call), because with one
// sequential stream a single device draws layer 1 for all samples before layer 2, and no cutting of
// that stream gives each replica its samples' numbers for every layer. Dropout would have to take
// that key; until then, (1) and (2) are what is promised.
#include "cohort/parallel/parallel_apply.h"

#include <condition_variable>
#include <exception>
#include <mutex>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/core/generator.h"
#include "cohort/core/threads.h"
#include "parallel/device_threads.h"

namespace cohort::parallel::detail {

namespace {

uint64_t mix(uint64_t base, uint64_t r) {  // splitmix64 of base and the replica index
  uint64_t z = base + 0x9e3779b97f4a7c15ULL * (r + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::string message_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "an exception that is not a std::exception";
  }
}

}  // namespace

void check_apply_sizes(size_t replicas, size_t inputs, size_t devices) {
  COHORT_CHECK(replicas == inputs && inputs == devices, "parallel_apply: expected one input tuple and one device "
               "per replica, got ", replicas, " replicas, ", inputs, " inputs and ", devices, " devices");
}

void run_replicas(const char* op, std::vector<ReplicaJob>& jobs) {
  std::vector<Device> devices;
  for (const ReplicaJob& j : jobs) {
    check_device(j.device, op);
    devices.push_back(j.device);
  }
  std::vector<std::exception_ptr> errors(jobs.size());
  if (jobs.size() == 1 || on_device_thread()) {
    // One replica is a plain call; a nested call (a replica that is itself data-parallel) runs
    // its replicas in turn, since its own device's thread is busy running it.
    for (size_t r = 0; r < jobs.size(); ++r) {
      try {
        jobs[r].run();
      } catch (...) {
        errors[r] = std::current_exception();
      }
    }
  } else {
    divide_threads_among(devices);
    const bool grad_mode = GradMode::is_enabled();
    Generator& caller_generator = default_generator();
    std::mutex m;
    std::condition_variable done;
    size_t remaining = jobs.size();
    std::optional<uint64_t> base;  // one draw from the caller's stream, taken on first need
    for (size_t r = 0; r < jobs.size(); ++r) {
      run_on_device_thread(jobs[r].device, [&, r] {
        try {
          AutoGradMode mode(grad_mode);
          ThreadGeneratorScope rng([&, r] {
            std::lock_guard<std::mutex> l(m);
            if (!base) base = caller_generator.next_u64();
            return mix(*base, r);
          });
          jobs[r].run();
        } catch (...) {
          errors[r] = std::current_exception();
        }
        std::lock_guard<std::mutex> l(m);
        if (--remaining == 0) done.notify_all();
      });
    }
    std::unique_lock<std::mutex> l(m);
    done.wait(l, [&] { return remaining == 0; });
  }

  size_t failed = 0;
  std::ostringstream os;
  for (size_t r = 0; r < jobs.size(); ++r) {
    if (!errors[r]) continue;
    ++failed;
    os << "\n  replica " << r << " on " << jobs[r].device << " (inputs " << jobs[r].inputs
       << "): " << message_of(errors[r]);
  }
  COHORT_CHECK(failed == 0, op, ": ", failed, " of ", jobs.size(), " replicas failed:", os.str());
}

}  // namespace cohort::parallel::detail
