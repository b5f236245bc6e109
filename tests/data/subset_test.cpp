// Subset and random_split: the chosen examples in order, a split that is a partition fixed by its
// seed, and errors for indices and shares that do not fit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "support/error_of.h"

#include "cohort/data/subset.h"
#include "cohort/ops/creation.h"

using namespace cohort;
using namespace cohort::testing;
using ::testing::HasSubstr;

namespace {

std::shared_ptr<data::TensorDataset> numbered(int64_t n) {
  return std::make_shared<data::TensorDataset>(arange(n, kInt64) * 10, arange(n, kInt64), std::vector<std::string>{"a"});
}

TEST(Subset, ChosenExamplesInOrder) {
  data::Subset s(numbered(5), {4, 0, 4});
  EXPECT_EQ(s.size(), 3);
  EXPECT_EQ(s.get(0).data.item<int64_t>(), 40);
  EXPECT_EQ(s.get(1).target.item<int64_t>(), 0);
  EXPECT_EQ(s.classes(), (std::vector<std::string>{"a"}));
  EXPECT_THAT(error_of([&] { s.get(3); }), HasSubstr("Subset::get: index 3 is out of range for a subset of 3"));
  EXPECT_THAT(error_of([] { data::Subset(numbered(5), {5}); }),
              HasSubstr("Subset: index 5 is out of range for a dataset of 5 examples"));
}

TEST(Subset, RandomSplitIsAPartitionFixedByTheSeed) {
  auto [train, held] = data::random_split(numbered(10), 0.3, 7);
  EXPECT_EQ(train->size(), 7);
  EXPECT_EQ(held->size(), 3);
  std::vector<int64_t> all = train->indices();
  all.insert(all.end(), held->indices().begin(), held->indices().end());
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(data::random_split(numbered(10), 0.3, 7).second->indices(), held->indices());
  EXPECT_NE(data::random_split(numbered(10), 0.3, 8).first->indices(), train->indices());

  EXPECT_THAT(error_of([] { data::random_split(numbered(10), 0, 1); }), HasSubstr("must be in (0, 1), got 0"));
  EXPECT_THAT(error_of([] { data::random_split(numbered(3), 0.1, 1); }),
              HasSubstr("holding out 0.1 of 3 examples leaves 3 to train on and 0 held out; both need at least one"));
}

}  // namespace
