// The per-device executor threads: two queues, one thread, the device's share of the cores.
//
// Note [Device executor]
// Work done for device cpu:k away from the user's thread runs on cpu:k's one persistent thread:
// parallel_apply's replicas (plain jobs, first in first out) and the backward engine's ready nodes
// of cpu:k (ranked jobs, the highest sequence number first: Note [Backward engine]). One thread per
// device means one OpenMP pool per device, warmed by the forward and reused by the backward, where
// separate threads would each start and keep a pool of their own. Before every job the thread takes
// the device's share of the cores (Note [Threads per device] in threads.cpp), so a job that changed
// its thread count does not change the next job's.
//
// The calling thread stands for one device as well: the backward engine runs the nodes of the first
// root's device on it, and parallel_apply runs its first replica on it, so that device's forward and
// backward share the caller's thread just as every other device's share its executor. (With replica
// 0 on executor 0 instead, the blitz CNN at batch 256 on 2 devices ran at a median 21.9k images/s
// against 26.6k before executors were shared, and at 28.1k with replica 0 on the caller: each
// thread then finds its device's data in its own core's caches; bench/data_parallel_bench.cpp,
// alternated runs.)
//
// Order. When both kinds are queued they take turns: after a plain job the highest ranked job runs,
// after a ranked job the oldest plain job. Neither kind starves the other: a job waits at most for
// the jobs of its own kind ahead of it (for a ranked job: ranked higher, even if queued later) and
// one job of the other kind before each of them and before itself. (In a training step the two do
// not overlap: forward's replicas have returned before backward queues nodes.)
//
// Waiting. A job must never wait for a job queued behind it on its own thread. cohort's own waits
// keep that rule: parallel_apply called on an executor thread runs its replicas inline, one after
// the other; a backward pass started on an executor thread (a hook calling grad(), a replica calling
// backward in its forward) queues its nodes of that device here as ranked jobs and waits in
// run_ranked_until, which runs this device's ranked jobs, of that pass or of any other, until the
// pass is done. Ranked jobs never wait for plain ones (parallel_apply inside them runs inline), so
// that wait always ends; plain jobs queued meanwhile run after the job that waits. Other waits run
// nothing: a replica blocked in sync batch norm's rendezvous holds its thread, so a backward pass
// in another replica's forward that has nodes on that device (autograd::grad reaching the master's
// parameters on cpu:0) waits for it, and if the rendezvous waits for that replica in turn, it fails
// after 60 s, naming the deadlock.
//
// Errors. A job catches its own exceptions (the engine stores them in its task, parallel_apply in
// its error list). One that escapes anyway is printed to stderr with the device's name, and the
// thread goes on with the next job.
#include "core/device_executor.h"

#include <algorithm>
#include <array>
#include <exception>
#include <iostream>
#include <thread>

#include "cohort/core/error.h"
#include "cohort/core/threads.h"
#include "core/wait_policy.h"

namespace cohort::detail {

namespace {

constexpr int kMaxDevices = 4096;  // set_device_count's limit
thread_local DeviceExecutor* t_current = nullptr;

// The heap's order: std::push_heap keeps the greatest on top, so "less" means a lower rank or,
// at equal rank, a later arrival.
template <typename R>
bool runs_after(const R& a, const R& b) {
  return a.rank != b.rank ? a.rank < b.rank : a.arrival > b.arrival;
}

}  // namespace

DeviceExecutor& DeviceExecutor::of(Device device) {
  // Leaked, with their threads: work may still be queued while static destructors run.
  static std::array<std::atomic<DeviceExecutor*>, kMaxDevices> all{};
  static std::mutex creating;
  const int i = device.index();
  COHORT_CHECK_AS(DeviceError, i >= 0 && i < kMaxDevices, "DeviceExecutor: device ", device, " is out of range");
  DeviceExecutor* e = all[i].load(std::memory_order_acquire);
  if (e) return *e;
  std::lock_guard<std::mutex> l(creating);
  e = all[i].load(std::memory_order_relaxed);
  if (!e) {
    e = new DeviceExecutor(device);
    all[i].store(e, std::memory_order_release);
  }
  return *e;
}

DeviceExecutor* DeviceExecutor::current() { return t_current; }

DeviceExecutor::DeviceExecutor(Device device) : device_(device) {
  start_thread("the executor thread of device " + device.str(), [this] { loop(); }).detach();
}

void DeviceExecutor::post(std::function<void()> job) {
  bool sleeping;
  {
    std::lock_guard<std::mutex> l(mutex_);
    plain_.push_back(std::move(job));
    queued_.fetch_add(1, std::memory_order_release);
    sleeping = sleeping_;
  }
  if (sleeping) cv_.notify_one();
}

void DeviceExecutor::post_ranked(uint64_t rank, std::function<void()> job) {
  bool sleeping;
  {
    std::lock_guard<std::mutex> l(mutex_);
    ranked_.push_back(Ranked{rank, arrivals_++, std::move(job)});
    std::push_heap(ranked_.begin(), ranked_.end(), runs_after<Ranked>);
    queued_.fetch_add(1, std::memory_order_release);
    sleeping = sleeping_;
  }
  if (sleeping) cv_.notify_one();
}

std::function<void()> DeviceExecutor::pop_ranked() {
  std::pop_heap(ranked_.begin(), ranked_.end(), runs_after<Ranked>);
  std::function<void()> job = std::move(ranked_.back().job);
  ranked_.pop_back();
  queued_.fetch_sub(1, std::memory_order_relaxed);
  return job;
}

void DeviceExecutor::run(std::function<void()>& job) {
  const int threads = device_num_threads(device_);
  if (threads != get_num_threads()) set_num_threads(threads);
  try {
    job();
  } catch (const std::exception& e) {
    std::cerr << "cohort: a job on " << device_ << "'s thread threw (it should have caught it): " << e.what()
              << "\n";
  } catch (...) {
    std::cerr << "cohort: a job on " << device_ << "'s thread threw a non-std::exception (it should have caught it)\n";
  }
  job = nullptr;  // what the job captured is released before the thread waits again
}

void DeviceExecutor::loop() {
  t_current = this;
  for (;;) {
    std::function<void()> job;
    spin_until([this] { return queued_.load(std::memory_order_acquire) > 0; });
    {
      std::unique_lock<std::mutex> l(mutex_);
      wait_locked(l, [this] { return !plain_.empty() || !ranked_.empty(); });
      const bool ranked = !ranked_.empty() && (plain_.empty() || !last_was_ranked_);
      if (ranked) {
        job = pop_ranked();
      } else {
        job = std::move(plain_.front());
        plain_.pop_front();
        queued_.fetch_sub(1, std::memory_order_relaxed);
      }
      last_was_ranked_ = ranked;
    }
    run(job);
  }
}

void DeviceExecutor::run_ranked_until(const std::atomic<bool>& done) {
  COHORT_ASSERT(t_current == this);
  const int outer_threads = get_num_threads();
  for (;;) {
    std::function<void()> job;
    spin_until([&] { return done.load(std::memory_order_acquire) || queued_.load(std::memory_order_acquire) > 0; });
    {
      std::unique_lock<std::mutex> l(mutex_);
      wait_locked(l, [&] { return done.load(std::memory_order_acquire) || !ranked_.empty(); });
      if (done.load(std::memory_order_acquire)) break;
      job = pop_ranked();
    }
    run(job);
  }
  if (get_num_threads() != outer_threads) set_num_threads(outer_threads);
}

void DeviceExecutor::wake() {
  bool sleeping;
  {
    std::lock_guard<std::mutex> l(mutex_);  // a waiter is either before its check or inside wait()
    sleeping = sleeping_;
  }
  if (sleeping) cv_.notify_one();
}

}  // namespace cohort::detail

namespace cohort {

void run_on_devices(const std::vector<Device>& devices, const std::vector<std::function<void()>>& jobs) {
  COHORT_CHECK(devices.size() == jobs.size(), "run_on_devices: expected one device per job, got ", devices.size(),
               " devices and ", jobs.size(), " jobs");
  for (const Device& d : devices) check_device(d, "run_on_devices");
  if (jobs.empty()) return;
  // On an executor's thread (that thread is busy running the caller) the jobs run here, one after the
  // other. With fewer free cores than jobs they still run at once: each job is one thread with no
  // barrier inside it (its share is one thread then), and the step waits for the slowest only once
  // (Note [Threads on a busy machine] says what that measured).
  if (detail::DeviceExecutor::current()) {
    for (const auto& job : jobs) job();
    return;
  }
  divide_threads_among(devices);
  std::mutex m;
  std::condition_variable done;
  std::atomic<size_t> remaining{jobs.size() - 1};  // written under m; read without it while spinning
  for (size_t i = 1; i < jobs.size(); ++i) {
    detail::DeviceExecutor::of(devices[i]).post([&, i] {
      jobs[i]();
      std::lock_guard<std::mutex> l(m);
      if (remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) done.notify_all();
    });
  }
  const int caller_threads = get_num_threads();
  set_num_threads(device_num_threads(devices[0]));
  jobs[0]();
  set_num_threads(caller_threads);
  // Spin briefly for the other jobs (Note [Hand-off wait]), then sleep; either way take m before
  // returning, so that the last job has let go of m and done before they go out of scope.
  detail::spin_until([&] { return remaining.load(std::memory_order_acquire) == 0; });
  std::unique_lock<std::mutex> l(m);
  done.wait(l, [&] { return remaining.load(std::memory_order_relaxed) == 0; });
}

bool on_device_thread() { return detail::DeviceExecutor::current() != nullptr; }

}  // namespace cohort
