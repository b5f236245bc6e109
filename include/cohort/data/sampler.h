// Samplers: the order in which a DataLoader visits a dataset's examples, one epoch at a time.
//
// A sampler is stateless: indices(epoch) depends only on its constructor arguments and `epoch`, so
// any epoch can be replayed (or resumed mid-way) without saving anything but the epoch number.
//
//   data::RandomSampler s(10, /*seed=*/42);
//   std::vector<int64_t> order = s.indices(3);   // a permutation of 0..9, the same on every call
#pragma once

#include <cstdint>
#include <vector>

namespace cohort::data {

class Sampler {
 public:
  virtual ~Sampler() = default;
  // The dataset indices of epoch `epoch` (>= 0), in visiting order; exactly size() of them.
  virtual std::vector<int64_t> indices(int64_t epoch) const = 0;
  // How many indices every epoch has.
  virtual int64_t size() const = 0;
};

// 0, 1, ..., n-1 in every epoch.
class SequentialSampler : public Sampler {
 public:
  explicit SequentialSampler(int64_t n);
  std::vector<int64_t> indices(int64_t epoch) const override;
  int64_t size() const override { return n_; }

 private:
  int64_t n_;
};

// A fresh permutation of 0..n-1 per epoch, drawn from a generator seeded by mix_seed(seed, epoch):
// different epochs give unrelated orders, the same (seed, epoch) always the same order.
class RandomSampler : public Sampler {
 public:
  RandomSampler(int64_t n, uint64_t seed);
  std::vector<int64_t> indices(int64_t epoch) const override;
  int64_t size() const override { return n_; }
  uint64_t seed() const { return seed_; }

 private:
  int64_t n_;
  uint64_t seed_;
};

// One rank's share of n examples when world_size processes train together.
//
// The rule, for an epoch: every rank builds the same order of 0..n-1 (RandomSampler(n, seed)'s
// permutation with shuffle, else 0..n-1), then
//   - drop_last = false: pads the order to a multiple of world_size by repeating it from its start,
//     so every example is seen at least once per epoch (n = 10, world_size = 4: 12 slots, the first
//     two examples of the order are seen twice);
//   - drop_last = true: cuts the order to a multiple of world_size, so every example is seen at most
//     once (n = 10, world_size = 4: the last two examples of the order are skipped this epoch).
// Rank r then takes the positions r, r + world_size, r + 2 * world_size, ... of that order.
// All ranks get the same count, size() = ceil(n / world_size) (floor with drop_last), and the
// slices are disjoint as positions: an example appears twice in an epoch only as padding.
// Throws when world_size < 1, rank is outside [0, world_size) or n < 0.
//
//   data::DistributedSampler s(dataset->size(), rank, world_size, /*shuffle=*/true, /*seed=*/0);
class DistributedSampler : public Sampler {
 public:
  DistributedSampler(int64_t n, int64_t rank, int64_t world_size, bool shuffle = true, uint64_t seed = 0,
                     bool drop_last = false);
  std::vector<int64_t> indices(int64_t epoch) const override;
  int64_t size() const override { return per_rank_; }
  int64_t rank() const { return rank_; }
  int64_t world_size() const { return world_size_; }

 private:
  int64_t n_, rank_, world_size_;
  bool shuffle_;
  uint64_t seed_;
  bool drop_last_;
  int64_t per_rank_;
};

// A well-mixed 64-bit seed from a seed and a value (splitmix64 of both): nearby inputs give
// unrelated outputs. Used for the per-epoch permutations and the DataLoader's per-sample generators.
uint64_t mix_seed(uint64_t seed, uint64_t value);

}  // namespace cohort::data
