// DataLoaderOptions: one options struct for both loaders, cohort's DataLoader (data/dataloader.h) and
// libtorch's make_data_loader (data/stateless_dataloader.h), since both spell it data::DataLoaderOptions.
//
//   data::DataLoaderOptions().batch_size(64).workers(2).drop_last(true)     // libtorch's setters
//   data::DataLoaderOptions(32).shuffle(true).num_workers(2).seed(0)        // cohort's
//
// Options one loader does not use are refused by it (make_data_loader refuses shuffle, sampler and
// transform: there the sampler and .map() decide), never silently ignored.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "cohort/data/dataset.h"
#include "cohort/data/sampler.h"

namespace cohort::data {

struct DataLoaderOptions {
  DataLoaderOptions() = default;
  // Implicit, as in libtorch: make_data_loader(dataset, 64).
  DataLoaderOptions(size_t batch_size) : batch_size_(static_cast<int64_t>(batch_size)) {}  // NOLINT

  DataLoaderOptions& batch_size(int64_t v) { batch_size_ = v; return *this; }
  // Drop an epoch's last batch when it is smaller than batch_size.
  DataLoaderOptions& drop_last(bool v) { drop_last_ = v; return *this; }
  // Worker threads; 0 loads in the caller's thread. workers() is libtorch's name, num_workers() cohort's.
  DataLoaderOptions& workers(int64_t v) { workers_ = v; return *this; }
  DataLoaderOptions& num_workers(int64_t v) { workers_ = v; return *this; }
  // Batches loaded or being loaded ahead of the caller; unset: workers * prefetch_factor.
  DataLoaderOptions& max_jobs(std::optional<size_t> v) { max_jobs_ = v; return *this; }
  // Batches each worker may load ahead of the caller, when max_jobs is unset.
  DataLoaderOptions& prefetch_factor(int64_t v) { prefetch_factor_ = v; return *this; }
  // How long the caller waits for a worker's batch before throwing; unset: no limit.
  DataLoaderOptions& timeout(std::optional<std::chrono::milliseconds> v) { timeout_ = v; return *this; }
  // libtorch's switch between in-order and as-ready batches. Accepted for its spelling; both loaders
  // always hand batches out in order (which is what makes them independent of the worker count).
  DataLoaderOptions& enforce_ordering(bool v) { enforce_ordering_ = v; return *this; }
  // The seed of the per-sample (cohort) or per-batch (make_data_loader) generators. Unset: drawn once
  // from cohort::default_generator() when the loader is built (manual_seed decides).
  DataLoaderOptions& seed(uint64_t v) { seed_ = v; return *this; }
  // cohort's DataLoader only: shuffle with RandomSampler(dataset size, seed); ignored when a sampler is given.
  DataLoaderOptions& shuffle(bool v) { shuffle_ = v; return *this; }
  // cohort's DataLoader only: applied to each example's data, with that sample's generator.
  DataLoaderOptions& transform(Transform v) { transform_ = std::move(v); return *this; }
  // cohort's DataLoader only: replaces the sequential / shuffled order, e.g. a DistributedSampler.
  DataLoaderOptions& sampler(std::shared_ptr<Sampler> v) { sampler_ = std::move(v); return *this; }

  int64_t batch_size() const { return batch_size_; }
  bool drop_last() const { return drop_last_; }
  int64_t workers() const { return workers_; }
  int64_t num_workers() const { return workers_; }
  const std::optional<size_t>& max_jobs() const { return max_jobs_; }
  int64_t prefetch_factor() const { return prefetch_factor_; }
  const std::optional<std::chrono::milliseconds>& timeout() const { return timeout_; }
  bool enforce_ordering() const { return enforce_ordering_; }
  const std::optional<uint64_t>& seed() const { return seed_; }
  bool shuffle() const { return shuffle_; }
  const Transform& transform() const { return transform_; }
  const std::shared_ptr<Sampler>& sampler() const { return sampler_; }

 private:
  int64_t batch_size_ = 1;  // libtorch's default
  bool drop_last_ = false;
  int64_t workers_ = 0;
  std::optional<size_t> max_jobs_;
  int64_t prefetch_factor_ = 2;
  std::optional<std::chrono::milliseconds> timeout_;
  bool enforce_ordering_ = true;
  std::optional<uint64_t> seed_;
  bool shuffle_ = false;
  Transform transform_;
  std::shared_ptr<Sampler> sampler_;
};

// What a libtorch loader's options() returns: the options with max_jobs resolved, as plain fields.
struct FullDataLoaderOptions {
  explicit FullDataLoaderOptions(const DataLoaderOptions& options)
      : batch_size(static_cast<size_t>(options.batch_size())),
        workers(static_cast<size_t>(options.workers())),
        max_jobs(options.max_jobs().value_or(workers * static_cast<size_t>(options.prefetch_factor()))),
        timeout(options.timeout()),
        enforce_ordering(options.enforce_ordering()),
        drop_last(options.drop_last()) {}

  size_t batch_size;
  size_t workers;
  size_t max_jobs;
  std::optional<std::chrono::milliseconds> timeout;
  bool enforce_ordering;
  bool drop_last;
};

}  // namespace cohort::data
