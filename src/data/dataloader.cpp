// DataLoader: a cursor over epochs; each loop loads its batches through a BatchPipeline (Note [Batch
// pipeline] in batch_pipeline.cpp): in the caller's thread or in workers running a bounded way ahead.
#include "cohort/data/dataloader.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <string>
#include <utility>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/core/threads.h"
#include "cohort/data/batch_pipeline.h"
#include "cohort/ops/shape.h"

namespace cohort::data {

uint64_t sample_seed(uint64_t seed, int64_t epoch, int64_t index) {
  // A different first step than RandomSampler's mix_seed(seed, epoch), so that the permutation and
  // the transforms never share a stream.
  constexpr uint64_t kTransformStream = 0x7472616e73666f72ull;  // "transfor"
  return mix_seed(mix_seed(mix_seed(seed, kTransformStream), static_cast<uint64_t>(epoch)),
                  static_cast<uint64_t>(index));
}

// One loop: the epoch's order and the shared batch pipeline that loads it.
struct DataLoader::Pipeline {
  DataLoader* loader;  // null once the loader is destroyed: the loop then ends
  // Fixed before the pipeline starts, read-only after (its workers read them).
  std::shared_ptr<const IndexedDataset> dataset;
  Transform transform;
  std::vector<int64_t> order;
  int64_t batch_size, epoch;
  uint64_t seed;
  std::unique_ptr<detail::BatchPipeline> batches;

  ~Pipeline() {
    batches.reset();  // joins the workers before the state they read goes
    if (loader != nullptr) loader->active_ = nullptr;
  }

  Batch load(int64_t k, const std::atomic<bool>& stop) const;
};

namespace {

// Stacks one field of a batch's examples; all must have the same shape, or all be undefined.
Tensor collate(const char* field, const std::vector<Tensor>& parts, const std::vector<int64_t>& indices,
               int64_t batch, int64_t epoch) {
  for (size_t i = 0; i < parts.size(); ++i) {
    COHORT_CHECK(parts[i].defined() == parts[0].defined(), "DataLoader: batch ", batch, " of epoch ", epoch,
                 " mixes examples with and without ", field, " (sample ", indices[0], ": ",
                 parts[0].defined() ? "defined" : "undefined", ", sample ", indices[i], ": ",
                 parts[i].defined() ? "defined" : "undefined", ")");
    if (!parts[0].defined()) continue;
    COHORT_CHECK(parts[i].sizes() == parts[0].sizes() && parts[i].dtype() == parts[0].dtype(),
                 "DataLoader: cannot stack the ", field, "s of batch ", batch, " of epoch ", epoch, ": sample ",
                 indices[0], " has ", parts[0].dtype(), " ", parts[0].sizes(), " but sample ", indices[i], " has ",
                 parts[i].dtype(), " ", parts[i].sizes(), "; hint: give every example the same ", field,
                 " shape and dtype (e.g. resize or crop in the transform)");
  }
  if (!parts[0].defined()) return Tensor();
  return stack(parts);
}

// Asks the cache for the first bytes of an example's data before its transform reads them. A batch
// of small examples drawn at random from a large dataset (MNIST's 47 MB of images) otherwise waits
// on memory once per example, one example after the other.
void prefetch(const Tensor& data) {
  if (!data.is_contiguous() || data.device().type() != DeviceType::CPU) return;
  constexpr size_t kMaxBytes = 4096, kLine = 64;
  const auto* p = static_cast<const char*>(data.data_ptr());
  for (size_t offset = 0; offset < std::min(data.nbytes(), kMaxBytes); offset += kLine) __builtin_prefetch(p + offset);
}

// How many examples load() gets ahead of the one it transforms: enough for their reads to overlap,
// few enough that large decoded images do not pile up.
constexpr size_t kExamplesAhead = 8;

}  // namespace

Batch DataLoader::Pipeline::load(int64_t k, const std::atomic<bool>& stop) const {
  Batch b;
  const int64_t begin = k * batch_size;
  const int64_t end = std::min<int64_t>(begin + batch_size, static_cast<int64_t>(order.size()));
  b.indices.assign(order.begin() + begin, order.begin() + end);
  const size_t n = b.indices.size();
  // Runs one step of sample i, naming it in any error.
  auto guarded = [&](size_t i, auto&& step) {
    auto fail = [&](const char* message) {
      return Error(cohort::detail::str("DataLoader: loading sample ", b.indices[i], " (batch ", k, " of epoch ", epoch,
                                       ") failed: ", message));
    };
    try {
      step();
    } catch (const std::exception& e) {
      throw fail(e.what());
    } catch (...) {
      throw fail("an exception that is not a std::exception");
    }
  };
  std::vector<Example<>> examples(n);
  std::vector<Tensor> datas, targets;
  size_t fetched = 0;
  for (size_t i = 0; i < n; ++i) {
    for (; fetched < std::min(n, i + kExamplesAhead); ++fetched) {
      if (stop) return {};  // the loop is being torn down: stop between samples, not after the batch
      guarded(fetched, [&] {
        examples[fetched] = dataset->get(b.indices[fetched]);
        COHORT_CHECK(examples[fetched].data.defined(), "the dataset returned an example with undefined data");
        if (transform) prefetch(examples[fetched].data);
      });
    }
    if (stop) return {};
    Example<> e = std::move(examples[i]);
    if (transform) {
      guarded(i, [&] {
        Generator gen(sample_seed(seed, epoch, b.indices[i]));
        e.data = transform(e.data, gen);
        COHORT_CHECK(e.data.defined(), "the transform returned an undefined tensor");
      });
    }
    datas.push_back(std::move(e.data));
    targets.push_back(std::move(e.target));
  }
  b.data = collate("input", datas, b.indices, k, epoch);
  b.target = collate("target", targets, b.indices, k, epoch);
  return b;
}

DataLoader::DataLoader(std::shared_ptr<const IndexedDataset> dataset, DataLoaderOptions options)
    : dataset_(std::move(dataset)), options_(std::move(options)) {
  COHORT_CHECK(dataset_ != nullptr, "DataLoader: the dataset is null");
  const int64_t n = dataset_->size();
  COHORT_CHECK(n > 0, "DataLoader: the dataset is empty, got size ", n);
  COHORT_CHECK(options_.batch_size() >= 1, "DataLoader: batch_size must be at least 1, got ", options_.batch_size());
  COHORT_CHECK(options_.num_workers() >= 0, "DataLoader: num_workers must be non-negative, got ",
               options_.num_workers(), "; hint: 0 loads in the caller's thread");
  COHORT_CHECK(options_.num_workers() <= kMaxThreads, "DataLoader: num_workers must be at most ", kMaxThreads,
               ", got ", options_.num_workers(), "; hint: a few workers per core keep any model fed");
  COHORT_CHECK(options_.prefetch_factor() >= 1, "DataLoader: prefetch_factor must be at least 1, got ",
               options_.prefetch_factor());
  COHORT_CHECK(!options_.max_jobs() || *options_.max_jobs() >= 1, "DataLoader: max_jobs must be at least 1, got ",
               options_.max_jobs().value_or(0), "; hint: leave it unset for num_workers * prefetch_factor");
  seed_ = options_.seed() ? *options_.seed() : default_generator().next_u64();
  sampler_ = options_.sampler();
  if (!sampler_) {
    if (options_.shuffle()) sampler_ = std::make_shared<RandomSampler>(n, seed_);
    else sampler_ = std::make_shared<SequentialSampler>(n);
  }
  const int64_t count = sampler_->size(), bs = options_.batch_size();
  num_batches_ = options_.drop_last() ? count / bs : (count + bs - 1) / bs;
  COHORT_CHECK(num_batches_ > 0, "DataLoader: no batch to load: the sampler gives ", count,
               " examples per epoch and drop_last drops a batch smaller than batch_size ", bs,
               "; hint: lower batch_size or turn drop_last off");
}

DataLoader::~DataLoader() {
  if (active_ != nullptr) {
    active_->batches->shutdown();
    active_->loader = nullptr;
  }
}

DataLoader::DataLoader(DataLoader&& other) noexcept
    : dataset_(std::move(other.dataset_)), options_(std::move(other.options_)), sampler_(std::move(other.sampler_)),
      seed_(other.seed_), num_batches_(other.num_batches_), state_(other.state_), active_(other.active_) {
  other.active_ = nullptr;
  if (active_ != nullptr) active_->loader = this;
}

DataLoader& DataLoader::operator=(DataLoader&& other) noexcept {
  if (this == &other) return *this;
  if (active_ != nullptr) {
    active_->batches->shutdown();
    active_->loader = nullptr;
  }
  dataset_ = std::move(other.dataset_);
  options_ = std::move(other.options_);
  sampler_ = std::move(other.sampler_);
  seed_ = other.seed_;
  num_batches_ = other.num_batches_;
  state_ = other.state_;
  active_ = std::exchange(other.active_, nullptr);
  if (active_ != nullptr) active_->loader = this;
  return *this;
}

void DataLoader::load_state(State state) {
  COHORT_CHECK(active_ == nullptr, "DataLoader::load_state: a loop over this loader is running; hint: move the "
               "cursor between loops, not inside one");
  COHORT_CHECK(state.epoch >= 0, "DataLoader::load_state: epoch must be non-negative, got ", state.epoch);
  COHORT_CHECK(state.batch >= 0 && state.batch <= num_batches_, "DataLoader::load_state: batch must be in [0, ",
               num_batches_, "] for this loader's ", num_batches_, " batches per epoch, got ", state.batch,
               "; hint: was the checkpoint saved with another batch_size, drop_last or dataset?");
  state_ = state;
}

void DataLoader::set_epoch(int64_t epoch) { load_state({epoch, 0}); }

DataLoader::Iterator DataLoader::begin() {
  COHORT_CHECK(active_ == nullptr, "DataLoader::begin: another loop over this loader is still running; hint: "
               "finish or destroy its iterator first, or use a second loader");
  auto pipe = std::make_unique<Pipeline>();
  pipe->loader = this;
  pipe->dataset = dataset_;
  pipe->transform = options_.transform();
  pipe->order = sampler_->indices(state_.epoch);
  const int64_t n = dataset_->size(), count = static_cast<int64_t>(pipe->order.size());
  COHORT_CHECK(count == sampler_->size(), "DataLoader: the sampler's size() is ", sampler_->size(),
               " but it gave ", count, " indices for epoch ", state_.epoch);
  for (int64_t index : pipe->order)
    COHORT_CHECK(index >= 0 && index < n, "DataLoader: the sampler gave index ", index, " in epoch ", state_.epoch,
                 " for a dataset of ", n, " examples; hint: build the sampler with the dataset's size");
  pipe->batch_size = options_.batch_size();
  pipe->epoch = state_.epoch;
  pipe->seed = seed_;
  detail::BatchPipeline::Options po;
  po.name = "DataLoader";
  po.first = state_.batch;
  po.end = num_batches_;
  po.workers = options_.num_workers();
  po.capacity = static_cast<int64_t>(options_.max_jobs().value_or(
      static_cast<size_t>(options_.num_workers() * options_.prefetch_factor())));
  po.timeout = options_.timeout();
  po.seed = seed_;
  po.epoch = state_.epoch;
  const Pipeline* p = pipe.get();
  pipe->batches = std::make_unique<detail::BatchPipeline>(
      po, [p](int64_t k, int64_t, const std::atomic<bool>& stop) -> std::shared_ptr<void> {
        return std::make_shared<Batch>(p->load(k, stop));
      });
  active_ = pipe.get();
  return Iterator(std::move(pipe));
}

DataLoader::Iterator::Iterator(std::unique_ptr<Pipeline> pipe) : pipe_(std::move(pipe)) { ++*this; }
DataLoader::Iterator::Iterator(Iterator&&) noexcept = default;
DataLoader::Iterator& DataLoader::Iterator::operator=(Iterator&&) noexcept = default;
DataLoader::Iterator::~Iterator() = default;

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  if (pipe_ == nullptr) return *this;
  if (pipe_->loader == nullptr || pipe_->batches->done()) {
    // The loop reached the end of the epoch, or the loader is gone (its destructor joined the workers).
    if (pipe_->loader != nullptr) pipe_->loader->state_ = State{pipe_->epoch + 1, 0};
    pipe_.reset();
    current_ = Batch{};
    return *this;
  }
  try {
    current_ = std::move(*std::static_pointer_cast<Batch>(pipe_->batches->take()));
  } catch (...) {
    pipe_.reset();  // the cursor stays at the failed batch
    current_ = Batch{};
    throw;
  }
  pipe_->loader->state_ = State{pipe_->epoch, pipe_->batches->next()};  // handed out
  return *this;
}

}  // namespace cohort::data
