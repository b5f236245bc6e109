// The batch pipeline shared by cohort's DataLoader and libtorch's make_data_loader.
#include "cohort/data/batch_pipeline.h"

#include <omp.h>

#include <utility>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/core/generator.h"
#include "cohort/core/profiling.h"
#include "cohort/core/threads.h"
#include "cohort/data/sampler.h"

namespace cohort::data::detail {

// Note [Batch pipeline]
// One loop over a loader is one pipeline: batches first..end-1, handed out by take() in order.
// Without workers take() loads the batch itself. With W workers, worker w loads the batches k with
// k % W == w, and may start batch k only once k < next + capacity, so at most `capacity` batches
// are loaded or loading but not yet handed out; batch k waits in slot k % capacity, which no other
// batch in that window shares. A batch's content depends only on k (the loader fixes every batch's
// indices before the loop starts, and the default generator during a load is seeded by
// batch_seed(seed, epoch, k)), so the batches are the same for any W. A failed load is handed out
// as its exception in its turn; its worker stops, since the caller stops there. Destroying the
// pipeline sets `stop` (loads check it between samples) and joins the workers.

uint64_t batch_seed(uint64_t seed, int64_t epoch, int64_t batch) {
  // Its own first step, so that batch generators never share a stream with the sampler's
  // permutations or the per-sample transform generators.
  constexpr uint64_t kBatchStream = 0x6261746368676e72ull;  // "batchgnr"
  return mix_seed(mix_seed(mix_seed(seed, kBatchStream), static_cast<uint64_t>(epoch)), static_cast<uint64_t>(batch));
}

BatchPipeline::BatchPipeline(Options options, Load load)
    : options_(std::move(options)), load_(std::move(load)), next_(options_.first) {
  const int64_t workers = options_.workers;
  if (workers == 0 || done()) return;
  COHORT_ASSERT(options_.capacity >= 1);
  slots_.resize(static_cast<size_t>(options_.capacity));
  try {
    for (int64_t w = 0; w < workers; ++w) {
      int64_t first = next_ - next_ % workers + w;  // worker w loads the batches k with k % workers == w
      if (first < next_) first += workers;
      threads_.push_back(start_thread(options_.name + " worker " + std::to_string(w) + " of " + std::to_string(workers),
                                      [this, first, workers] { work(first, workers); }));
    }
  } catch (...) {
    shutdown();
    throw;
  }
}

BatchPipeline::~BatchPipeline() { shutdown(); }

void BatchPipeline::shutdown() {
  {
    std::lock_guard<std::mutex> l(mutex_);  // under the lock, so no worker misses the wake-up
    stop_ = true;
  }
  space_.notify_all();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
}

std::shared_ptr<void> BatchPipeline::load(int64_t batch, int64_t worker) {
  NoGradGuard no_grad;  // also in the caller's thread: a loaded batch is data, never part of a graph
  profiling::Scope profile("dataloader.load_batch", profiling::Kind::User);
  Generator parent(batch_seed(options_.seed, options_.epoch, batch));
  ThreadGeneratorScope scope(parent);
  return load_(batch, worker, stop_);
}

void BatchPipeline::work(int64_t first, int64_t workers) {
  omp_set_num_threads(1);  // W workers already keep W cores busy; ops inside must not fan out
  const int64_t capacity = options_.capacity;
  for (int64_t k = first; k < options_.end; k += workers) {
    {
      std::unique_lock<std::mutex> l(mutex_);
      space_.wait(l, [&] { return stop_ || k < next_ + capacity; });
      if (stop_) return;
    }
    Slot s;
    s.ready = true;
    try {
      s.batch = load(k, k % workers);
    } catch (...) {
      s.error = std::current_exception();
    }
    const bool failed = s.error != nullptr;
    {
      std::lock_guard<std::mutex> l(mutex_);
      if (stop_) return;
      slots_[static_cast<size_t>(k % capacity)] = std::move(s);
    }
    ready_.notify_all();
    if (failed) return;  // the caller stops at this batch; later ones would be wasted work
  }
}

std::shared_ptr<void> BatchPipeline::take() {
  COHORT_ASSERT(!done() && !stop_);
  profiling::Scope profile("dataloader.next", profiling::Kind::User);  // the wait for a batch, or its loading
  if (threads_.empty()) {
    std::shared_ptr<void> b = load(next_, 0);
    ++next_;
    return b;
  }
  std::unique_lock<std::mutex> l(mutex_);
  Slot& slot = slots_[static_cast<size_t>(next_ % options_.capacity)];
  if (options_.timeout) {
    COHORT_CHECK(ready_.wait_for(l, *options_.timeout, [&] { return slot.ready; }), options_.name,
                 ": no batch within the timeout of ", options_.timeout->count(), " ms (waiting for batch ", next_,
                 " of epoch ", options_.epoch, " from worker ", next_ % options_.workers,
                 "); hint: raise DataLoaderOptions::timeout, or look for a dataset get() that blocks");
  } else {
    ready_.wait(l, [&] { return slot.ready; });
  }
  Slot s = std::move(slot);
  slot = Slot{};
  if (!s.error) ++next_;
  l.unlock();
  space_.notify_all();
  if (s.error) std::rethrow_exception(s.error);
  return std::move(s.batch);
}

}  // namespace cohort::data::detail
