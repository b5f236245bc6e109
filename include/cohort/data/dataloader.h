// DataLoader: batches of an IndexedDataset, in the order of a Sampler, optionally loaded by worker threads.
//
//   auto ds = std::make_shared<data::TensorDataset>(images, labels);
//   data::DataLoader loader(ds, data::DataLoaderOptions().batch_size(32).shuffle(true).num_workers(2));
//   while (loader.epoch() < epochs)
//     for (const data::Batch& b : loader) train_step(b.data, b.target);   // one epoch per loop
//
// Simpler than libtorch's make_data_loader: one class, no dataset/sampler templates, no stacking
// transform to spell out; batches come out in sampler order whatever the number of workers.
//
// The loader is a cursor over epochs, {epoch, batch}, where `batch` counts the batches of `epoch`
// handed out so far (a range-for hands out batch k just before running the body for it).
//   - `for (const data::Batch& b : loader)` runs the current epoch's batches from state().batch on.
//     Inside the body, epoch() is the epoch of `b` and state().batch is b's position + 1 (so it is
//     num_batches() in the last body). When the loop reaches the end, the cursor moves to {epoch + 1, 0}.
//   - Breaking out of the loop (or an exception) leaves the cursor where it is: the next loop goes on
//     with the next batch of the same epoch. After a break in the last body the cursor is
//     {epoch, num_batches()}: the next loop has no batch and moves it to {epoch + 1, 0}, so
//     `while (loader.epoch() < epochs)` never skips or repeats an epoch. A batch whose loading failed
//     was not handed out; the next loop tries it again.
//   - A checkpoint saves state() (anywhere, also inside the body); the resumed run calls load_state() on
//     a loader built with the same dataset and options (and seed) and continues with exactly the batches
//     the first run would have seen, bit for bit.
//
// Determinism: epoch e's order is sampler.indices(e); the transform of sample i in epoch e draws from
// a Generator seeded with sample_seed(seed, e, i), and a draw from the default generator inside get()
// or the transform uses one seeded per batch (data/batch_pipeline.h: batch_seed). So the batches
// depend only on the seed, the epoch and the options, never on num_workers or thread timing.
//
// Threads: with num_workers = 0 batches are loaded in the caller's thread when the loop needs them.
// With num_workers = W > 0, W threads load batch k in worker k % W, at most max_jobs (default
// W * prefetch_factor) batches ahead of the caller (loaded or being loaded, not yet handed out), with
// autograd off and one OpenMP thread each; with a timeout, waiting longer for a batch throws. The dataset's get() and the transform must be safe to call from several threads.
// A loader is used from one thread, and by one loop at a time.
#pragma once

#include <cstdint>
#include <iterator>
#include <memory>
#include <optional>
#include <vector>

#include "cohort/core/tensor.h"
#include "cohort/data/dataloader_options.h"
#include "cohort/data/dataset.h"
#include "cohort/data/sampler.h"

namespace cohort::data {

// A batch of examples: data [B, ...], target [B] for 0-d targets or [B, ...] (undefined when the
// dataset's targets are), indices = the dataset indices of the B examples, in order.
struct Batch {
  Tensor data;
  Tensor target;
  std::vector<int64_t> indices;
  int64_t size() const { return static_cast<int64_t>(indices.size()); }
};

// The seed of the Generator that the transform of sample `index` gets in epoch `epoch`; lets a test
// or a notebook reproduce one sample's augmentation outside the loader.
uint64_t sample_seed(uint64_t seed, int64_t epoch, int64_t index);

class DataLoader {
  struct Pipeline;  // the batches of one loop: the worker threads and their queue (dataloader.cpp)

 public:
  struct State {
    int64_t epoch = 0;
    int64_t batch = 0;  // batches of `epoch` handed out, in [0, num_batches()]
  };

  // Throws on a null or empty dataset, batch_size < 1, num_workers outside [0, kMaxThreads] (1024,
  // cohort/core/threads.h), prefetch_factor < 1, max_jobs 0, or when drop_last leaves no batch at all. A loop
  // whose workers the system refuses to start throws cohort::Error naming the worker.
  DataLoader(std::shared_ptr<const IndexedDataset> dataset, DataLoaderOptions options = {});
  // Stops and joins the workers of a running loop; its iterator then compares equal to end().
  ~DataLoader();
  DataLoader(DataLoader&& other) noexcept;
  DataLoader& operator=(DataLoader&& other) noexcept;
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  int64_t num_batches() const { return num_batches_; }  // per epoch
  int64_t epoch() const { return state_.epoch; }
  uint64_t seed() const { return seed_; }
  const DataLoaderOptions& options() const { return options_; }
  const IndexedDataset& dataset() const { return *dataset_; }

  State state() const { return state_; }
  // Throws when epoch < 0, batch is outside [0, num_batches()] or a loop is running.
  void load_state(State state);
  // Same as load_state({epoch, 0}).
  void set_epoch(int64_t epoch);

  // A single-pass iterator. Destroying it stops and joins the loop's workers.
  // What end() returns: the loop is over when the iterator compares equal to it (a sentinel, since
  // the end of a loop is known only when the last batch has been handed out).
  struct End {};
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;

    Iterator(Iterator&&) noexcept;
    Iterator& operator=(Iterator&&) noexcept;
    ~Iterator();
    const Batch& operator*() const { return current_; }
    const Batch* operator->() const { return &current_; }
    // Hands out the next batch; rethrows, as a cohort::Error naming the sample, batch and epoch,
    // an exception thrown while loading it.
    Iterator& operator++();
    void operator++(int) { ++*this; }
    bool operator==(End) const { return pipe_ == nullptr; }
    bool operator!=(End) const { return pipe_ != nullptr; }

   private:
    friend class DataLoader;
    explicit Iterator(std::unique_ptr<Pipeline> pipe);
    std::unique_ptr<Pipeline> pipe_;  // null once the loop is over
    Batch current_;
  };

  // Starts a loop at state(); throws when another loop over this loader is still running.
  Iterator begin();
  End end() const { return {}; }

 private:
  std::shared_ptr<const IndexedDataset> dataset_;
  DataLoaderOptions options_;
  std::shared_ptr<Sampler> sampler_;
  uint64_t seed_ = 0;
  int64_t num_batches_ = 0;
  State state_;
  Pipeline* active_ = nullptr;  // the running loop, owned by its Iterator
};

}  // namespace cohort::data
