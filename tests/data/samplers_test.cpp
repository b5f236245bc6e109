// libtorch's samplers (data::samplers): the index sets each one hands out, epoch by epoch, and the
// distributed samplers' partition rules with and without duplicates.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "cohort/core/generator.h"
#include "cohort/data/samplers.h"
#include "support/error_of.h"

using namespace cohort;
using namespace cohort::data::samplers;
using cohort::testing::error_of;
using ::testing::HasSubstr;

namespace {

// Every batch of one epoch (next(batch_size) until nullopt), and the indices in order.
template <class S>
std::vector<std::vector<size_t>> batches(S& s, size_t batch_size) {
  std::vector<std::vector<size_t>> out;
  while (auto b = s.next(batch_size)) out.push_back(*b);
  return out;
}
template <class S>
std::vector<size_t> flat(S& s, size_t batch_size = 3) {
  std::vector<size_t> out;
  for (auto& b : batches(s, batch_size)) out.insert(out.end(), b.begin(), b.end());
  return out;
}
std::vector<size_t> iota(size_t n, size_t from = 0) {
  std::vector<size_t> v(n);
  std::iota(v.begin(), v.end(), from);
  return v;
}

TEST(SequentialSampler, HandsOutConsecutiveBatchesThenNulloptAndStartsOverOnReset) {
  SequentialSampler s(10);
  auto b = batches(s, 4);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0], iota(4));
  EXPECT_EQ(b[2], (std::vector<size_t>{8, 9}));
  EXPECT_FALSE(s.next(4).has_value());
  EXPECT_EQ(s.index(), 10u);
  s.reset();
  EXPECT_EQ(flat(s), iota(10));
  s.reset(4);
  EXPECT_EQ(flat(s), iota(4));
}

TEST(RandomSampler, EachResetIsANewPermutationThatManualSeedFixes) {
  manual_seed(3);
  RandomSampler s(50);
  std::vector<size_t> first = flat(s, 7);
  std::vector<size_t> sorted = first;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, iota(50));
  EXPECT_EQ(s.index(), 50u);
  s.reset();
  std::vector<size_t> second = flat(s, 7);
  EXPECT_NE(first, second) << "every reset draws a new order";
  manual_seed(3);
  RandomSampler again(50);
  EXPECT_EQ(flat(again, 7), first) << "the default generator decides the orders";
  again.reset(5);
  EXPECT_EQ(flat(again).size(), 5u);
}

// libtorch's rule: local = ceil(n / R) with duplicates (padding repeats 0, 1, ...), floor without.
TEST(DistributedRandomSampler, PartitionsOneShuffleAmongReplicas) {
  for (bool dup : {true, false}) {
    for (size_t n : {10u, 12u, 3u}) {
      const size_t replicas = 4, local = dup ? (n + 3) / 4 : n / 4;
      std::multiset<size_t> all;
      for (size_t r = 0; r < replicas; ++r) {
        DistributedRandomSampler s(n, replicas, r, dup);
        std::vector<size_t> mine = flat(s, 2);
        EXPECT_EQ(mine.size(), local) << n << " " << r << " " << dup;
        all.insert(mine.begin(), mine.end());
      }
      std::multiset<size_t> expected;
      for (size_t i = 0; i < local * replicas; ++i) expected.insert(i < n ? i : i - n);
      EXPECT_EQ(all, expected) << "n " << n << ", allow_duplicates " << dup;
    }
  }
}

TEST(DistributedRandomSampler, TheShuffleDependsOnTheEpochOnly) {
  DistributedRandomSampler a(40, 2, 1), b(40, 2, 1);
  EXPECT_EQ(flat(a), flat(b));
  a.reset();
  std::vector<size_t> epoch0 = flat(a);
  a.reset();
  EXPECT_EQ(flat(a), epoch0) << "without set_epoch every epoch repeats";
  a.set_epoch(1);
  EXPECT_EQ(a.epoch(), 1u);
  a.reset();
  EXPECT_NE(flat(a), epoch0);
}

TEST(DistributedSequentialSampler, GivesContiguousSharesWrappingToTheStart) {
  DistributedSequentialSampler r0(10, 4, 0), r3(10, 4, 3);
  EXPECT_EQ(flat(r0), iota(3));
  EXPECT_EQ(flat(r3), (std::vector<size_t>{9, 0, 1})) << "positions 9, 10, 11 modulo 10";
  DistributedSequentialSampler strict(10, 4, 3, /*allow_duplicates=*/false);
  EXPECT_EQ(flat(strict), (std::vector<size_t>{6, 7}));
  r0.reset();
  EXPECT_EQ(flat(r0, 1), iota(3));
  r0.reset(20);
  EXPECT_EQ(flat(r0), iota(5));
}

TEST(DistributedSamplers, RefuseARankOutsideTheReplicas) {
  EXPECT_THAT(error_of([] { DistributedRandomSampler(10, 2, 2); }),
              HasSubstr("DistributedRandomSampler: rank must be in [0, 2) for num_replicas 2, got 2"));
  EXPECT_THAT(error_of([] { DistributedSequentialSampler(10, 0, 0); }),
              HasSubstr("DistributedSequentialSampler: num_replicas must be at least 1, got 0"));
  EXPECT_THAT(error_of([] { RandomSampler(-1); }), HasSubstr("RandomSampler: size must be non-negative, got -1"));
}

}  // namespace
