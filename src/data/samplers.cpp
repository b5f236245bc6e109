// libtorch's samplers. The distributed ones reproduce libtorch's index rules (and, with libstdc++,
// its shuffles: the same std::mt19937(epoch) and std::shuffle); RandomSampler reuses cohort's
// permutation, seeded from the default generator at each reset.
#include "cohort/data/samplers.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "cohort/core/error.h"
#include "cohort/core/generator.h"
#include "cohort/data/sampler.h"

namespace cohort::data::samplers {

namespace detail {
void throw_no_archives(const char* op) {
  COHORT_CHECK(false, op, ": cohort has no torch::serialize archives, so a sampler cannot be saved or loaded; "
               "hint: save the epoch (set_epoch) and rebuild the sampler instead");
  COHORT_ASSERT(false);
}
}  // namespace detail

namespace {

// The next min(batch_size, end - index) entries from `index`, or nullopt when none is left.
optional<std::vector<size_t>> take(const std::vector<size_t>& all, size_t& index, size_t end, size_t batch_size) {
  if (index >= end) return nullopt;
  const size_t stop = std::min(end, index + batch_size);
  std::vector<size_t> out(all.begin() + static_cast<std::ptrdiff_t>(index), all.begin() + static_cast<std::ptrdiff_t>(stop));
  index = stop;
  return out;
}

void check_replicas(const char* op, size_t num_replicas, size_t rank) {
  COHORT_CHECK(num_replicas >= 1, op, ": num_replicas must be at least 1, got 0");
  COHORT_CHECK(rank < num_replicas, op, ": rank must be in [0, ", num_replicas, ") for num_replicas ",
               num_replicas, ", got ", rank, "; hint: ranks count from 0");
}

}  // namespace

SequentialSampler::SequentialSampler(size_t size) : size_(size) {}

void SequentialSampler::reset(optional<size_t> new_size) {
  if (new_size) size_ = *new_size;
  index_ = 0;
}

optional<std::vector<size_t>> SequentialSampler::next(size_t batch_size) {
  const size_t end = std::min(index_ + batch_size, size_);
  if (end == index_) return nullopt;
  std::vector<size_t> batch(end - index_);
  std::iota(batch.begin(), batch.end(), index_);
  index_ = end;
  return batch;
}

RandomSampler::RandomSampler(int64_t size, Dtype /*index_dtype*/) {
  COHORT_CHECK(size >= 0, "RandomSampler: size must be non-negative, got ", size);
  reset(static_cast<size_t>(size));
}

void RandomSampler::reset(optional<size_t> new_size) {
  const size_t n = new_size.value_or(indices_.size());
  const std::vector<int64_t> order =
      data::RandomSampler(static_cast<int64_t>(n), default_generator().next_u64()).indices(0);
  indices_.assign(order.begin(), order.end());
  index_ = 0;
}

optional<std::vector<size_t>> RandomSampler::next(size_t batch_size) {
  return take(indices_, index_, indices_.size(), batch_size);
}

DistributedRandomSampler::DistributedRandomSampler(size_t size, size_t num_replicas, size_t rank,
                                                   bool allow_duplicates)
    : DistributedSampler(size, num_replicas, rank, allow_duplicates) {
  check_replicas("DistributedRandomSampler", num_replicas, rank);
  reset(size_);
}

void DistributedRandomSampler::populate_indices() {
  const size_t local = local_sample_count();
  const size_t count = num_replicas_ == 1 ? size_ : local * num_replicas_;
  all_indices_.resize(count);
  std::iota(all_indices_.begin(), all_indices_.end(), size_t{0});
  for (size_t i = size_; i < count; ++i) all_indices_[i] = i - size_;  // padding repeats the first examples
  begin_index_ = rank_ * local;
  end_index_ = begin_index_ + local;
  sample_index_ = begin_index_;
}

void DistributedRandomSampler::reset(optional<size_t> new_size) {
  size_ = new_size.value_or(size_);
  populate_indices();
  std::mt19937 engine(static_cast<std::mt19937::result_type>(epoch_));
  std::shuffle(all_indices_.begin(), all_indices_.end(), engine);
  sample_index_ = begin_index_;
}

optional<std::vector<size_t>> DistributedRandomSampler::next(size_t batch_size) {
  return take(all_indices_, sample_index_, end_index_, batch_size);
}

DistributedSequentialSampler::DistributedSequentialSampler(size_t size, size_t num_replicas, size_t rank,
                                                           bool allow_duplicates)
    : DistributedSampler(size, num_replicas, rank, allow_duplicates) {
  check_replicas("DistributedSequentialSampler", num_replicas, rank);
  populate_indices();
}

void DistributedSequentialSampler::populate_indices() {
  begin_index_ = rank_ * local_sample_count();
  end_index_ = begin_index_ + local_sample_count();
  sample_index_ = begin_index_;
}

void DistributedSequentialSampler::reset(optional<size_t> new_size) {
  const size_t size = new_size.value_or(size_);
  if (size != size_) {
    size_ = size;
    populate_indices();
  } else {
    sample_index_ = begin_index_;
  }
}

optional<std::vector<size_t>> DistributedSequentialSampler::next(size_t batch_size) {
  if (sample_index_ == end_index_) return nullopt;
  const size_t end = std::min(sample_index_ + batch_size, end_index_);
  std::vector<size_t> batch(end - sample_index_);
  std::iota(batch.begin(), batch.end(), sample_index_);
  if (end >= size_)
    for (size_t& index : batch) index %= size_;
  sample_index_ = end;
  return batch;
}

}  // namespace cohort::data::samplers
