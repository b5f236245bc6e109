// libtorch's samplers (torch::data::samplers): stateful producers of batch requests for make_data_loader.
//
//   data::samplers::SequentialSampler s(10);
//   s.next(4);   // {0, 1, 2, 3}, then {4, 5, 6, 7}, {8, 9}, nullopt; reset() starts over
//
// The loader calls reset() when a loop begins (a new epoch) and next(batch_size) until it returns
// nullopt. RandomSampler draws a fresh permutation on every reset() from cohort::default_generator()
// (libtorch: from its global generator), so torch::manual_seed fixes the orders; the orders themselves
// differ from libtorch's. The distributed samplers follow libtorch's rules exactly (see below).
// cohort's DataLoader has its own stateless samplers (data/sampler.h: indices(epoch)).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "cohort/core/dtype.h"
#include "cohort/core/optional.h"

namespace cohort::serialize {
// libtorch's archives, which cohort does not have: declared so that a custom sampler's
// save/load overrides compile (see Sampler::save).
class OutputArchive;
class InputArchive;
}  // namespace cohort::serialize

namespace cohort::data::samplers {

namespace detail {
[[noreturn]] void throw_no_archives(const char* op);
}  // namespace detail

template <typename BatchRequest = std::vector<size_t>>
class Sampler {
 public:
  using BatchRequestType = BatchRequest;

  virtual ~Sampler() = default;
  // Starts over; new_size, when given, replaces the number of examples.
  virtual void reset(optional<size_t> new_size) = 0;
  // The next batch request of at most batch_size examples; nullopt once the epoch is exhausted.
  virtual optional<BatchRequest> next(size_t batch_size) = 0;
  // Pure in libtorch; here they throw cohort::Error (cohort has no torch::serialize archives), so
  // a sampler that does not override them still builds.
  virtual void save(serialize::OutputArchive& /*archive*/) const { detail::throw_no_archives("Sampler::save"); }
  virtual void load(serialize::InputArchive& /*archive*/) { detail::throw_no_archives("Sampler::load"); }
};

// 0, 1, ..., size-1.
class SequentialSampler : public Sampler<> {
 public:
  explicit SequentialSampler(size_t size);
  void reset(optional<size_t> new_size = nullopt) override;
  optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const noexcept { return index_; }  // indices handed out this epoch

 private:
  size_t size_;
  size_t index_ = 0;
};

// A permutation of 0..size-1, drawn again at every reset() (and at construction).
// index_dtype is accepted for libtorch's signature; the indices are size_t either way.
class RandomSampler : public Sampler<> {
 public:
  explicit RandomSampler(int64_t size, Dtype index_dtype = kInt64);
  void reset(optional<size_t> new_size = nullopt) override;
  optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const noexcept { return index_; }

 private:
  std::vector<size_t> indices_;
  size_t index_ = 0;
};

// One replica's share when num_replicas processes train together, libtorch's rule. Each replica gets
// local = ceil(size / num_replicas) indices with allow_duplicates (the first examples repeat to fill
// the last share), floor(size / num_replicas) without (the last size % num_replicas examples are
// never used). Throws when num_replicas is 0 or rank >= num_replicas.
template <typename BatchRequest = std::vector<size_t>>
class DistributedSampler : public Sampler<BatchRequest> {
 public:
  DistributedSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true)
      : size_(size), num_replicas_(num_replicas), rank_(rank), epoch_(0), allow_duplicates_(allow_duplicates) {}

  // The shuffle of DistributedRandomSampler depends on the epoch only: call set_epoch(e) before
  // each epoch's loop, or every epoch repeats the same order (libtorch's behaviour).
  void set_epoch(size_t epoch) { epoch_ = epoch; }
  size_t epoch() const { return epoch_; }

 protected:
  size_t local_sample_count() {
    return allow_duplicates_ ? (size_ + num_replicas_ - 1) / num_replicas_ : size_ / num_replicas_;
  }

  size_t size_;
  size_t num_replicas_;
  size_t rank_;
  size_t epoch_;
  bool allow_duplicates_;
};

// All replicas shuffle the same list with std::mt19937(epoch): 0..size-1 padded with 0, 1, ... to
// local * num_replicas entries (allow_duplicates), or 0..local * num_replicas - 1 (without); replica
// r takes positions [r * local, (r + 1) * local) of the shuffled list.
class DistributedRandomSampler : public DistributedSampler<> {
 public:
  DistributedRandomSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true);
  void reset(optional<size_t> new_size = nullopt) override;
  optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const noexcept { return sample_index_; }

 private:
  void populate_indices();
  size_t begin_index_ = 0, end_index_ = 0, sample_index_ = 0;
  std::vector<size_t> all_indices_;
};

// Replica r takes the contiguous positions [r * local, (r + 1) * local), taken modulo size (so the
// last replica wraps to the first examples with allow_duplicates).
class DistributedSequentialSampler : public DistributedSampler<> {
 public:
  DistributedSequentialSampler(size_t size, size_t num_replicas = 1, size_t rank = 0, bool allow_duplicates = true);
  void reset(optional<size_t> new_size = nullopt) override;
  optional<std::vector<size_t>> next(size_t batch_size) override;
  size_t index() const noexcept { return sample_index_; }

 private:
  void populate_indices();
  size_t begin_index_ = 0, end_index_ = 0, sample_index_ = 0;
};

}  // namespace cohort::data::samplers
