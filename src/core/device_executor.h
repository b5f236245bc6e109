// One persistent thread per device, shared by the autograd engine and parallel_apply (not public API).
// Note [Device executor] in device_executor.cpp says how the two kinds of job share it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

#include "cohort/core/device.h"

namespace cohort::detail {

class DeviceExecutor {
 public:
  // The executor of `device`, its thread started on first use and kept for the process.
  // Throws DeviceError for an index outside [0, 4096).
  static DeviceExecutor& of(Device device);
  // The executor whose thread is calling (inside one of its jobs), or null on any other thread.
  static DeviceExecutor* current();

  Device device() const { return device_; }

  // Queues a job that runs after the plain jobs queued before it (parallel_apply's replicas).
  void post(std::function<void()> job);
  // Queues a ranked job: the highest rank runs first, equal ranks in arrival order (the engine's
  // ready nodes, ranked by sequence number).
  void post_ranked(uint64_t rank, std::function<void()> job);

  // Only on this executor's thread, from inside a job that must wait for work that may be queued here
  // (a backward pass started on this thread): runs the queued ranked jobs until `done` is true.
  // Whoever sets `done` calls wake() afterwards. Plain jobs are not run: they wait for this job.
  void run_ranked_until(const std::atomic<bool>& done);
  // Makes run_ranked_until look at its `done` again.
  void wake();

  DeviceExecutor(const DeviceExecutor&) = delete;
  DeviceExecutor& operator=(const DeviceExecutor&) = delete;

 private:
  struct Ranked {
    uint64_t rank;
    uint64_t arrival;
    std::function<void()> job;
  };
  explicit DeviceExecutor(Device device);
  void loop();
  std::function<void()> pop_ranked();  // mutex_ held, ranked_ not empty
  void run(std::function<void()>& job);
  // cv_.wait(l, ready), with sleeping_ set while the thread sleeps.
  template <class Ready>
  void wait_locked(std::unique_lock<std::mutex>& l, Ready ready) {
    while (!ready()) {
      sleeping_ = true;
      cv_.wait(l);
      sleeping_ = false;
    }
  }

  Device device_;
  std::mutex mutex_;
  std::condition_variable cv_;  // only this executor's thread waits on it
  // Jobs in both queues (written under mutex_): what the thread watches while it spins before
  // sleeping (Note [Hand-off wait] in threads.cpp).
  std::atomic<int> queued_{0};
  bool sleeping_ = false;  // the thread is in cv_.wait (under mutex_): only then do posts notify
  std::deque<std::function<void()>> plain_;
  std::vector<Ranked> ranked_;  // a heap: the highest rank, then the earliest arrival, on top
  uint64_t arrivals_ = 0;
  bool last_was_ranked_ = false;
};

}  // namespace cohort::detail
