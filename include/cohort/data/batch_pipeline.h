// The machinery under both loaders (Note [Batch pipeline] in src/data/batch_pipeline.cpp): batches
// first..end-1 of one loop, loaded in the caller's thread or by worker threads that run a bounded
// number of batches ahead, handed out strictly in order. A batch is type-erased (shared_ptr<void>)
// so that cohort's DataLoader (data::Batch) and libtorch's make_data_loader (any BatchType) share it.
// Internal to data/: a user never builds one.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace cohort::data::detail {

class BatchPipeline {
 public:
  // Loads batch `batch`; `worker` is the loading thread's number (batch % workers, 0 without
  // workers) and `stop` turns true when the loop is torn down (a load may return early then; its
  // result is discarded). Runs with autograd off and the calling thread's default generator seeded
  // by batch_seed(seed, epoch, batch).
  using Load = std::function<std::shared_ptr<void>(int64_t batch, int64_t worker, const std::atomic<bool>& stop)>;

  struct Options {
    std::string name;      // starts thread names and errors: "DataLoader", "make_data_loader"
    int64_t first = 0;     // the first batch to hand out
    int64_t end = 0;       // one past the last batch
    int64_t workers = 0;   // 0: load in the caller's thread, when take() needs the batch
    int64_t capacity = 0;  // batches loaded or loading but not yet taken (>= 1 with workers)
    std::optional<std::chrono::milliseconds> timeout;  // take()'s longest wait for a worker's batch
    uint64_t seed = 0;     // with epoch: the per-batch default generators
    int64_t epoch = 0;
  };

  // Starts the workers (cohort::Error naming the worker if the system refuses one).
  BatchPipeline(Options options, Load load);
  // Stops the workers between samples and joins them.
  ~BatchPipeline();
  BatchPipeline(const BatchPipeline&) = delete;
  BatchPipeline& operator=(const BatchPipeline&) = delete;

  bool done() const { return next_ == options_.end; }
  int64_t next() const { return next_; }  // the batch take() returns
  // Batch next() (waiting for it, or loading it here without workers); rethrows what loading it
  // threw; throws cohort::Error when the timeout passes first. Advances next() only on success.
  std::shared_ptr<void> take();
  // Stops and joins the workers; take() must not be called afterwards.
  void shutdown();

 private:
  struct Slot {
    bool ready = false;
    std::shared_ptr<void> batch;
    std::exception_ptr error;
  };
  std::shared_ptr<void> load(int64_t batch, int64_t worker);
  void work(int64_t first, int64_t workers);

  const Options options_;
  const Load load_;
  int64_t next_;
  std::vector<Slot> slots_;  // batch k waits in slots_[k % capacity]
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable space_, ready_;
  std::atomic<bool> stop_{false};
};

// The seed of the default generator while batch `batch` of epoch `epoch` loads: a random draw inside
// a dataset's get() or a libtorch transform then depends on (seed, epoch, batch), not on which
// worker loaded it or when.
uint64_t batch_seed(uint64_t seed, int64_t epoch, int64_t batch);

}  // namespace cohort::data::detail
