// Persistent per-device worker threads. Spawning a thread per replica per call costs a thread
// creation and a fresh OpenMP pool every forward; a kept thread keeps its pool warm.
#include "parallel/device_threads.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "cohort/core/threads.h"

namespace cohort::parallel::detail {

namespace {

thread_local bool t_on_device_thread = false;

class DeviceThread {
 public:
  explicit DeviceThread(Device device) : device_(device) {
    std::thread([this] { run(); }).detach();  // lives for the process, like the engine's workers
  }
  void push(std::function<void()> job) {
    {
      std::lock_guard<std::mutex> l(mutex_);
      jobs_.push_back(std::move(job));
    }
    cv_.notify_one();
  }

 private:
  void run() {
    t_on_device_thread = true;
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock<std::mutex> l(mutex_);
        cv_.wait(l, [this] { return !jobs_.empty(); });
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      int threads = device_num_threads(device_);
      if (threads != get_num_threads()) set_num_threads(threads);
      job();
    }
  }
  Device device_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
};

}  // namespace

void run_on_device_thread(Device device, std::function<void()> job) {
  static std::mutex m;
  static auto* all = new std::unordered_map<int, DeviceThread*>();  // leaked: threads outlive statics
  DeviceThread* t;
  {
    std::lock_guard<std::mutex> l(m);
    auto& slot = (*all)[device.index()];
    if (!slot) slot = new DeviceThread(device);
    t = slot;
  }
  t->push(std::move(job));
}

bool on_device_thread() { return t_on_device_thread; }

}  // namespace cohort::parallel::detail
