// Sequential, random and distributed samplers: pure functions of (constructor arguments, epoch).
#include "cohort/data/sampler.h"

#include <numeric>
#include <random>

#include "cohort/core/error.h"

namespace cohort::data {

namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

void check_epoch(const char* op, int64_t epoch) {
  COHORT_CHECK(epoch >= 0, op, ": epoch must be non-negative, got ", epoch);
}

// Fisher-Yates over mt19937_64. The draw is reduced with %, not a std:: distribution, because the
// standard leaves distributions' algorithms to the library and the order must not depend on it.
std::vector<int64_t> permutation(int64_t n, uint64_t seed, int64_t epoch) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  std::mt19937_64 engine(mix_seed(seed, static_cast<uint64_t>(epoch)));
  for (int64_t i = n - 1; i > 0; --i) std::swap(order[i], order[engine() % static_cast<uint64_t>(i + 1)]);
  return order;
}

}  // namespace

uint64_t mix_seed(uint64_t seed, uint64_t value) { return splitmix64(splitmix64(seed) ^ value); }

SequentialSampler::SequentialSampler(int64_t n) : n_(n) {
  COHORT_CHECK(n >= 0, "SequentialSampler: the number of examples must be non-negative, got ", n);
}

std::vector<int64_t> SequentialSampler::indices(int64_t epoch) const {
  check_epoch("SequentialSampler::indices", epoch);
  std::vector<int64_t> order(static_cast<size_t>(n_));
  std::iota(order.begin(), order.end(), int64_t{0});
  return order;
}

RandomSampler::RandomSampler(int64_t n, uint64_t seed) : n_(n), seed_(seed) {
  COHORT_CHECK(n >= 0, "RandomSampler: the number of examples must be non-negative, got ", n);
}

std::vector<int64_t> RandomSampler::indices(int64_t epoch) const {
  check_epoch("RandomSampler::indices", epoch);
  return permutation(n_, seed_, epoch);
}

DistributedSampler::DistributedSampler(int64_t n, int64_t rank, int64_t world_size, bool shuffle, uint64_t seed,
                                       bool drop_last)
    : n_(n), rank_(rank), world_size_(world_size), shuffle_(shuffle), seed_(seed), drop_last_(drop_last) {
  COHORT_CHECK(n >= 0, "DistributedSampler: the number of examples must be non-negative, got ", n);
  COHORT_CHECK(world_size >= 1, "DistributedSampler: world_size must be at least 1, got ", world_size);
  COHORT_CHECK(rank >= 0 && rank < world_size, "DistributedSampler: rank must be in [0, ", world_size,
               ") for world_size ", world_size, ", got ", rank, "; hint: ranks count from 0");
  per_rank_ = drop_last ? n / world_size : (n + world_size - 1) / world_size;
}

std::vector<int64_t> DistributedSampler::indices(int64_t epoch) const {
  check_epoch("DistributedSampler::indices", epoch);
  std::vector<int64_t> order;
  if (shuffle_) {
    order = permutation(n_, seed_, epoch);
  } else {
    order.resize(static_cast<size_t>(n_));
    std::iota(order.begin(), order.end(), int64_t{0});
  }
  // Position p of the padded (or cut) order is order[p % n]: positions past n repeat from the start,
  // wrapping again when world_size > n (n = 1 on 4 ranks: every rank gets example 0).
  std::vector<int64_t> mine;
  mine.reserve(static_cast<size_t>(per_rank_));
  for (int64_t i = 0; i < per_rank_; ++i) mine.push_back(order[(rank_ + i * world_size_) % n_]);
  return mine;
}

}  // namespace cohort::data
