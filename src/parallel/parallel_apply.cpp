// parallel_apply's runner: the replicas at once through run_on_devices (replica 0 on the calling
// thread, the others on their devices' executor threads: Note [Device executor] in
// src/core/device_executor.cpp), the caller's thread-local state carried over, every failure
// collected into one error.
//
// Note [Replica RNG]
// A replica that draws random numbers (dropout, noise in forward) must not share the caller's
// generator: concurrent draws would interleave in an order set by the scheduler. Each replica
// thread gets a copy of the caller's generator (ThreadGeneratorScope), made on its first draw, and
// when all are done the caller's generator takes the state of the first replica that drew. Random
// tensors are counter-based and take one draw each (Note [Counter-based random tensors] in
// ops/random.cpp), so every replica draws the same keys as the caller would, in the same order;
// told its samples (BatchSlice, from the plan), a replica's dropout mask is the slice of the mask
// that one device would draw for the whole batch. So: (1) masks and noise do not depend on the
// split, and training on n devices equals training on one; (2) a forward that draws nothing leaves
// the caller's stream alone; (3) after a forward that drew, the caller's stream is where one device
// would have left it. Without a plan (parallel_apply given bare devices) the replicas still draw
// from copies, but each numbers its tensors from 0: per-sample draws then repeat across replicas.
#include "cohort/parallel/parallel_apply.h"

#include <exception>
#include <functional>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/core/generator.h"
#include "cohort/core/threads.h"
#include "cohort/ops/autocast.h"

namespace cohort::parallel::detail {

namespace {

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
  if (jobs.size() == 1) {  // a plain call, drawing from the caller's generator
    try {
      jobs[0].run();
    } catch (...) {
      errors[0] = std::current_exception();
    }
  } else {
    Generator& caller_generator = default_generator();
    std::vector<std::optional<Generator>> drawn(jobs.size());  // each replica's generator after it ran
    const bool grad_mode = GradMode::is_enabled();
    const autocast::State autocast_state = autocast::current_state();  // replicas cast as the caller does
    auto run = [&](size_t r) {
      try {
        AutoGradMode mode(grad_mode);
        autocast::StateGuard autocast_scope(autocast_state);
        ThreadGeneratorScope rng(caller_generator);
        std::optional<BatchSliceScope> slice;
        if (jobs[r].slice) slice.emplace(*jobs[r].slice);
        jobs[r].run();
        if (rng.used()) drawn[r].emplace(rng.get());
      } catch (...) {
        errors[r] = std::current_exception();
      }
    };
    std::vector<std::function<void()>> runs;
    for (size_t r = 0; r < jobs.size(); ++r) runs.push_back([&run, r] { run(r); });
    run_on_devices(devices, runs);
    for (auto& g : drawn) {
      if (!g) continue;
      caller_generator = *g;
      break;
    }
  }

  size_t failed = 0;
  std::ostringstream os;
  for (size_t r = 0; r < jobs.size(); ++r) {
    if (!errors[r]) continue;
    ++failed;
    os << "\n  replica " << r << " on " << jobs[r].device << " (inputs " << (jobs[r].inputs ? jobs[r].inputs() : "?")
       << "): " << message_of(errors[r]);
  }
  COHORT_CHECK(failed == 0, op, ": ", failed, " of ", jobs.size(), " replicas failed:", os.str());
}

}  // namespace cohort::parallel::detail
