// Samplers: orders are pure functions of (arguments, epoch); DistributedSampler's padding / cutting
// rule and the disjointness of ranks for world sizes 1..4 and sizes that do not divide.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "cohort/data/dataloader.h"
#include "cohort/data/sampler.h"
#include "cohort/ops/creation.h"
#include "support/error_of.h"

using namespace cohort;
using namespace cohort::data;
using cohort::testing::error_of;
using ::testing::HasSubstr;

namespace {

std::vector<int64_t> iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), int64_t{0});
  return v;
}

std::vector<int64_t> sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

}  // namespace

TEST(SamplerTest, SequentialIsTheIdentityInEveryEpoch) {
  SequentialSampler s(5);
  EXPECT_EQ(s.size(), 5);
  EXPECT_EQ(s.indices(0), iota(5));
  EXPECT_EQ(s.indices(7), iota(5));
  EXPECT_TRUE(SequentialSampler(0).indices(0).empty());
}

TEST(SamplerTest, RandomIsAPermutationPerEpochReproducibleAndDifferentAcrossEpochs) {
  RandomSampler s(50, 42);
  EXPECT_EQ(s.size(), 50);
  std::set<std::vector<int64_t>> orders;
  for (int64_t e = 0; e < 5; ++e) {
    std::vector<int64_t> order = s.indices(e);
    EXPECT_EQ(sorted(order), iota(50)) << "epoch " << e;
    EXPECT_EQ(order, s.indices(e)) << "the same epoch twice";
    EXPECT_EQ(order, RandomSampler(50, 42).indices(e)) << "another sampler with the same seed";
    orders.insert(order);
  }
  EXPECT_EQ(orders.size(), 5u) << "every epoch has its own order";
  EXPECT_NE(RandomSampler(50, 43).indices(0), s.indices(0));
  EXPECT_NE(s.indices(0), iota(50));
  EXPECT_TRUE(RandomSampler(0, 1).indices(3).empty());
  EXPECT_EQ(RandomSampler(1, 1).indices(3), iota(1));
}

TEST(SamplerTest, MixSeedSeparatesNearbyInputs) {
  std::set<uint64_t> seen;
  for (uint64_t seed = 0; seed < 4; ++seed)
    for (uint64_t v = 0; v < 64; ++v) seen.insert(mix_seed(seed, v));
  EXPECT_EQ(seen.size(), 4u * 64u);
  EXPECT_EQ(mix_seed(9, 3), mix_seed(9, 3));
}

TEST(SamplerTest, Errors) {
  EXPECT_THAT(error_of([] { SequentialSampler(-1); }), HasSubstr("SequentialSampler: the number of examples must be non-negative, got -1"));
  EXPECT_THAT(error_of([] { RandomSampler(-2, 0); }), HasSubstr("RandomSampler: the number of examples must be non-negative, got -2"));
  EXPECT_THAT(error_of([] { RandomSampler(3, 0).indices(-1); }), HasSubstr("epoch must be non-negative, got -1"));
}

// Every world size 1..4, sizes around multiples of it, with and without shuffle: all ranks the same
// count, the padded order is the epoch's order repeated from its start, each example at least once.
TEST(DistributedSamplerTest, WithoutDropLastPadsFromTheStartAndCoversEverything) {
  for (int64_t world = 1; world <= 4; ++world) {
    for (int64_t n = 0; n <= 11; ++n) {
      for (bool shuffle : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "world " << world << " n " << n << " shuffle " << shuffle);
        const int64_t per_rank = (n + world - 1) / world;
        std::vector<int64_t> order = shuffle ? RandomSampler(n, 7).indices(2) : iota(n);
        std::vector<std::vector<int64_t>> parts;
        for (int64_t r = 0; r < world; ++r) {
          DistributedSampler s(n, r, world, shuffle, 7);
          EXPECT_EQ(s.size(), per_rank);
          parts.push_back(s.indices(2));
          ASSERT_EQ(static_cast<int64_t>(parts.back().size()), per_rank);
        }
        // Interleaving the ranks gives back the padded order: rank r holds positions r, r + world, ...
        std::map<int64_t, int> count;
        for (int64_t p = 0; p < per_rank * world; ++p) {
          int64_t got = parts[p % world][p / world];
          EXPECT_EQ(got, order[p % n]) << "position " << p;
          ++count[got];
        }
        EXPECT_EQ(static_cast<int64_t>(count.size()), n) << "every example at least once";
        for (auto [index, c] : count) EXPECT_LE(c, n >= world ? 2 : world) << "example " << index;
      }
    }
  }
}

TEST(DistributedSamplerTest, WithDropLastCutsTheTailAndRanksAreDisjoint) {
  for (int64_t world = 1; world <= 4; ++world) {
    for (int64_t n = 0; n <= 11; ++n) {
      SCOPED_TRACE(::testing::Message() << "world " << world << " n " << n);
      std::vector<int64_t> order = RandomSampler(n, 3).indices(0);
      std::vector<int64_t> all;
      for (int64_t r = 0; r < world; ++r) {
        DistributedSampler s(n, r, world, /*shuffle=*/true, /*seed=*/3, /*drop_last=*/true);
        EXPECT_EQ(s.size(), n / world);
        std::vector<int64_t> mine = s.indices(0);
        EXPECT_EQ(static_cast<int64_t>(mine.size()), n / world);
        all.insert(all.end(), mine.begin(), mine.end());
      }
      EXPECT_EQ(std::set<int64_t>(all.begin(), all.end()).size(), all.size()) << "no example twice";
      // What is skipped is the tail of the epoch's order.
      std::vector<int64_t> kept(order.begin(), order.begin() + (n / world) * world);
      EXPECT_EQ(sorted(all), sorted(kept));
    }
  }
}

TEST(DistributedSamplerTest, ShuffleIsTheSameOnEveryRankAndChangesWithTheEpoch) {
  DistributedSampler r0(100, 0, 2, true, 11), r1(100, 1, 2, true, 11);
  for (int64_t e = 0; e < 3; ++e) {
    std::vector<int64_t> a = r0.indices(e), b = r1.indices(e);
    std::vector<int64_t> both = a;
    both.insert(both.end(), b.begin(), b.end());
    EXPECT_EQ(sorted(both), iota(100)) << "the two ranks split one permutation, epoch " << e;
  }
  EXPECT_NE(r0.indices(0), r0.indices(1));
  EXPECT_EQ(r0.indices(1), DistributedSampler(100, 0, 2, true, 11).indices(1));
  EXPECT_NE(r0.indices(0), DistributedSampler(100, 0, 2, true, 12).indices(0));
  EXPECT_EQ(DistributedSampler(6, 1, 2, false).indices(5), (std::vector<int64_t>{1, 3, 5}));
}

TEST(DistributedSamplerTest, DrivesADataLoaderOverRanks) {
  auto ds = std::make_shared<TensorDataset>(zeros({10, 2}), arange(10));
  std::vector<int64_t> all;
  for (int64_t r = 0; r < 3; ++r) {
    auto sampler = std::make_shared<DistributedSampler>(10, r, 3, true, 4);
    DataLoader loader(ds, DataLoaderOptions(2).sampler(sampler).shuffle(false));  // the sampler wins
    EXPECT_EQ(loader.num_batches(), 2);
    for (const Batch& b : loader) all.insert(all.end(), b.indices.begin(), b.indices.end());
  }
  EXPECT_EQ(all.size(), 12u) << "4 per rank";
  EXPECT_EQ(std::set<int64_t>(all.begin(), all.end()).size(), 10u) << "every example at least once";
}

TEST(DistributedSamplerTest, Errors) {
  EXPECT_THAT(error_of([] { DistributedSampler(10, 2, 2); }),
              HasSubstr("DistributedSampler: rank must be in [0, 2) for world_size 2, got 2"));
  EXPECT_THAT(error_of([] { DistributedSampler(10, -1, 4); }), HasSubstr("rank must be in [0, 4) for world_size 4, got -1"));
  EXPECT_THAT(error_of([] { DistributedSampler(10, 0, 0); }),
              HasSubstr("DistributedSampler: world_size must be at least 1, got 0"));
  EXPECT_THAT(error_of([] { DistributedSampler(-3, 0, 1); }), HasSubstr("must be non-negative, got -3"));
  EXPECT_THAT(error_of([] { DistributedSampler(4, 0, 1).indices(-2); }), HasSubstr("epoch must be non-negative, got -2"));
}
