// libtorch's data loader: make_data_loader and StatelessDataLoader (torch::data).
//
//   auto ds = data::datasets::MNIST(root).map(data::transforms::Normalize<>(0.1307, 0.3081))
//                                        .map(data::transforms::Stack<>());
//   auto loader = data::make_data_loader(std::move(ds), data::DataLoaderOptions().batch_size(64).workers(2));
//   for (data::Example<>& batch : *loader) step(batch.data, batch.target);      // one epoch
//
// make_data_loader<Sampler = samplers::RandomSampler>(dataset, options | batch_size) builds the sampler
// from dataset.size() (cohort::Error when it is nullopt); make_data_loader(dataset, sampler, options)
// takes one. Batches are dataset.get_batch(request) of the sampler's requests, so a Dataset<Self>
// without Stack yields std::vector<Example<>>. Each begin() starts a new epoch: it resets the sampler,
// takes all of the epoch's requests from it (the last one is dropped when drop_last and smaller than
// batch_size) and checks their indices against dataset.size().
//
// Loading is cohort's DataLoader machinery (Note [Batch pipeline] in src/data/batch_pipeline.cpp):
// W = options.workers threads, each with its own copy of the dataset (made here, as libtorch does),
// load batch k in worker k % W at most max_jobs (default 2 * W) batches ahead; batches come out in
// order, and a random draw inside get() or a transform uses a default generator seeded by (seed,
// epoch, k), so the batches do not depend on W. A batch whose loading throws is rethrown when its
// turn comes as a cohort::Error naming the batch, the epoch and its indices, with the original
// exception nested (std::rethrow_if_nested), whatever W is (libtorch: WorkerException with workers,
// the original exception without).
//
// Differences from libtorch, on purpose: begin() while a loop is still running stops that loop
// and starts a new epoch (libtorch throws when workers are in flight); enforce_ordering(false) still
// hands batches out in order; stateful datasets (get_batch returning optional) and
// StatefulDataLoader are not provided. Options of cohort's DataLoader (shuffle, sampler, transform)
// are refused here, since the sampler and .map() decide those.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cohort/core/error.h"
#include "cohort/core/optional.h"
#include "cohort/data/batch_dataset.h"
#include "cohort/data/batch_pipeline.h"
#include "cohort/data/dataloader_options.h"
#include "cohort/data/iterator.h"
#include "cohort/data/samplers.h"

namespace cohort::data {

namespace detail {
// The loader's non-template parts (src/data/stateless_dataloader.cpp).
// Throws for batch_size < 1, workers outside [0, kMaxThreads], max_jobs 0 with workers, and cohort
// DataLoader options; returns the seed of the per-batch generators.
uint64_t check_loader_options(const DataLoaderOptions& options);
// `request` is the batch's indices when the sampler gives indices, else empty.
[[noreturn]] void throw_batch_error(int64_t batch, int64_t epoch, const std::vector<size_t>& request);
void check_request_indices(const std::vector<size_t>& request, optional<size_t> dataset_size, int64_t batch,
                           int64_t epoch);
[[noreturn]] void throw_empty_request(int64_t batch, int64_t epoch);
[[noreturn]] void throw_unsized_dataset();
}  // namespace detail

template <typename Dataset, typename Sampler>
class StatelessDataLoader {
 public:
  using BatchType = typename Dataset::BatchType;
  using BatchRequestType = typename Sampler::BatchRequestType;

  StatelessDataLoader(Dataset dataset, Sampler sampler, DataLoaderOptions options)
      : seed_(detail::check_loader_options(options)), options_(options), sampler_(std::move(sampler)) {
    dataset_size_ = dataset.size();
    const size_t copies = options_.workers > 0 ? options_.workers : 1;
    datasets_.reserve(copies);
    for (size_t w = 1; w < copies; ++w) datasets_.push_back(dataset);
    datasets_.push_back(std::move(dataset));
  }
  ~StatelessDataLoader() { join(); }
  StatelessDataLoader(const StatelessDataLoader&) = delete;
  StatelessDataLoader& operator=(const StatelessDataLoader&) = delete;

  // Starts a new epoch (see the top of this file).
  Iterator<BatchType> begin() {
    COHORT_CHECK(!joined_, "StatelessDataLoader::begin: join() was called, the loader is finished; hint: "
                 "build a new loader with make_data_loader");
    stop_loop();
    const int64_t epoch = epoch_++;
    auto requests = std::make_shared<std::vector<BatchRequestType>>(take_requests(epoch));

    detail::BatchPipeline::Options po;
    po.name = "DataLoader";
    po.end = static_cast<int64_t>(requests->size());
    po.workers = static_cast<int64_t>(options_.workers);
    po.capacity = static_cast<int64_t>(options_.max_jobs);
    po.timeout = options_.timeout;
    po.seed = seed_;
    po.epoch = epoch;
    auto load = [this, requests, epoch](int64_t k, int64_t worker, const std::atomic<bool>&) -> std::shared_ptr<void> {
      const BatchRequestType& request = (*requests)[static_cast<size_t>(k)];
      try {
        return std::make_shared<BatchType>(datasets_[static_cast<size_t>(worker)].get_batch(request));
      } catch (...) {
        if constexpr (std::is_same_v<BatchRequestType, std::vector<size_t>>)
          detail::throw_batch_error(k, epoch, request);
        else
          detail::throw_batch_error(k, epoch, {});
      }
    };
    auto loop = std::make_shared<detail::Loop<BatchType>>(std::make_unique<detail::BatchPipeline>(po, std::move(load)));
    loop_ = loop;
    return Iterator<BatchType>(std::move(loop));
  }
  Iterator<BatchType> end() { return Iterator<BatchType>(); }

  // Stops a running loop and joins its workers; begin() refuses afterwards. Idempotent.
  void join() {
    stop_loop();
    joined_ = true;
  }

  const FullDataLoaderOptions& options() const noexcept { return options_; }

 private:
  std::vector<BatchRequestType> take_requests(int64_t epoch) {
    sampler_.reset(nullopt);
    std::vector<BatchRequestType> requests;
    while (optional<BatchRequestType> request = sampler_.next(options_.batch_size)) {
      const auto k = static_cast<int64_t>(requests.size());
      if (request->size() < options_.batch_size && options_.drop_last) break;
      if (request->size() == 0) detail::throw_empty_request(k, epoch);
      if constexpr (std::is_same_v<BatchRequestType, std::vector<size_t>>)
        detail::check_request_indices(*request, dataset_size_, k, epoch);
      requests.push_back(std::move(*request));
    }
    return requests;
  }
  void stop_loop() {
    if (auto loop = loop_.lock()) loop->stop();
    loop_.reset();
  }

  const uint64_t seed_;
  const FullDataLoaderOptions options_;
  Sampler sampler_;
  std::vector<Dataset> datasets_;  // one per worker (or one for the caller's thread)
  optional<size_t> dataset_size_;
  int64_t epoch_ = 0;
  std::weak_ptr<detail::Loop<BatchType>> loop_;
  bool joined_ = false;
};

template <typename Dataset, typename Sampler>
std::enable_if_t<!Dataset::is_stateful, std::unique_ptr<StatelessDataLoader<Dataset, Sampler>>> make_data_loader(
    Dataset dataset, Sampler sampler, DataLoaderOptions options) {
  return std::make_unique<StatelessDataLoader<Dataset, Sampler>>(std::move(dataset), std::move(sampler),
                                                                  std::move(options));
}

// The sampler is Sampler(dataset.size()); throws when the size is nullopt.
template <typename Sampler = samplers::RandomSampler, typename Dataset>
std::enable_if_t<!Dataset::is_stateful && std::is_constructible_v<Sampler, size_t>,
                 std::unique_ptr<StatelessDataLoader<Dataset, Sampler>>>
make_data_loader(Dataset dataset, DataLoaderOptions options = DataLoaderOptions()) {
  const optional<size_t> size = dataset.size();
  if (!size.has_value()) detail::throw_unsized_dataset();
  return make_data_loader(std::move(dataset), Sampler(*size), std::move(options));
}

}  // namespace cohort::data
