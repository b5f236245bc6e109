// Random tensors (Note [Counter-based random tensors]): their distributions, one generator draw per
// tensor, the same values for any thread count, BatchSlice numbering, and multinomial sampling.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cohort/cohort.h>

#include "support/error_of.h"

using namespace cohort;

namespace {

TEST(Random, UniformAndNormalHaveTheirMoments) {
  manual_seed(1);
  const int64_t n = 1 << 20;
  for (DType dt : {kFloat32, kFloat64}) {
    Tensor u = rand({n}, TensorOptions(dt)).to(kFloat64);
    EXPECT_GE(u.min().item<double>(), 0.0);
    EXPECT_LT(u.max().item<double>(), 1.0);
    EXPECT_NEAR(u.mean().item<double>(), 0.5, 0.002);
    EXPECT_NEAR(u.var().item<double>(), 1.0 / 12, 0.001);
    Tensor z = randn({n}, TensorOptions(dt)).to(kFloat64);
    EXPECT_NEAR(z.mean().item<double>(), 0.0, 0.005);
    EXPECT_NEAR(z.var().item<double>(), 1.0, 0.005);
    // A quarter of the standard normal's mass lies beyond +-1.15035.
    EXPECT_NEAR((z.abs() > 1.15035).to(kFloat64).mean().item<double>(), 0.25, 0.002);
  }
  Tensor k = randint(3, 8, {n});
  EXPECT_EQ(k.dtype(), kInt64);
  EXPECT_EQ(k.min().item<int64_t>(), 3);
  EXPECT_EQ(k.max().item<int64_t>(), 7);
  for (int64_t v = 3; v < 8; ++v) EXPECT_NEAR((k == v).to(kFloat64).mean().item<double>(), 0.2, 0.003) << v;
}

TEST(Random, NeighbouringElementsAreUncorrelated) {
  manual_seed(2);
  Tensor u = rand({1 << 20}, TensorOptions(kFloat64)) - 0.5;
  Tensor a = u.slice(0, 0, -1), b = u.slice(0, 1, std::nullopt);
  EXPECT_NEAR((a * b).mean().item<double>() * 12, 0.0, 0.005);
}

TEST(Random, EachTensorTakesOneDrawFromItsGenerator) {
  Generator g(5), h(5);
  rand({1000}, g);
  randn({3, 7}, g);
  h.next_u64();
  h.next_u64();
  EXPECT_EQ(g.next_u64(), h.next_u64());
}

TEST(Random, ValuesDoNotDependOnTheThreadCount) {
  const int saved = get_num_threads();
  set_num_threads(1);
  manual_seed(3);
  Tensor one = randn({300000});
  set_num_threads(2);
  manual_seed(3);
  Tensor two = randn({300000});
  set_num_threads(saved);
  EXPECT_TRUE(equal(one, two));
}

// Under a BatchSlice, a tensor with the slice's size along its dim holds the whole batch's values at
// those samples; any other tensor is drawn as it is.
TEST(Random, ABatchSliceNumbersElementsAsInTheWholeBatch) {
  manual_seed(4);
  Tensor whole = rand({10, 3, 2});
  Tensor per_feature = rand({5, 2});  // 5 is no chunk size here (a coincidence would slice it)
  for (int64_t offset : {0, 4, 7}) {
    const int64_t size = offset == 7 ? 3 : 4;
    manual_seed(4);
    BatchSliceScope slice({/*dim=*/0, offset, size, /*total=*/10});
    EXPECT_TRUE(equal(rand({size, 3, 2}), whole.slice(0, offset, offset + size))) << offset;
    EXPECT_TRUE(equal(rand({5, 2}), per_feature)) << offset;
  }
  // Along a middle dim, and counted from the end.
  manual_seed(4);
  Tensor wide = rand({2, 6, 5});
  manual_seed(4);
  {
    BatchSliceScope slice({/*dim=*/-2, 2, 3, 6});
    EXPECT_TRUE(equal(rand({2, 3, 5}), wide.slice(1, 2, 5)));
  }
  EXPECT_EQ(BatchSliceScope::current(), nullptr);
}

// Frequencies follow the (unnormalised) weights, with and without replacement; zero weights are
// never drawn; a seed repeats the draw; errors name what is wrong.
TEST(Multinomial, DrawsFollowTheWeights) {
  manual_seed(3);
  Tensor w = tensor(std::vector<double>{1, 0, 3, 4});  // probabilities 1/8, 0, 3/8, 1/2
  const int64_t n = 200000;
  Tensor draws = multinomial(w, n, true);
  EXPECT_EQ(draws.dtype(), kInt64);
  EXPECT_EQ(draws.sizes(), (Shape{n}));
  const double expected[] = {0.125, 0, 0.375, 0.5};
  for (int64_t c = 0; c < 4; ++c) {
    const double freq = draws.eq(c).sum().item<int64_t>() / static_cast<double>(n);
    EXPECT_NEAR(freq, expected[c], 0.005) << "category " << c;  // 5 standard errors at most
  }
  // Without replacement: each row is a permutation of its non-zero categories' subset; the first draw
  // follows the weights.
  Tensor rows = w.unsqueeze(0).expand({50000, 4}).contiguous();
  Tensor perm = multinomial(rows, 3, false);
  EXPECT_EQ(perm.sizes(), (Shape{50000, 3}));
  Tensor each = std::get<0>(perm.sort(1));  // the three non-zero categories, each once
  EXPECT_TRUE(equal(each, tensor(std::vector<int64_t>{0, 2, 3}).unsqueeze(0).expand({50000, 3})));
  Tensor first = perm.select(1, 0);
  EXPECT_NEAR(first.eq(3).sum().item<int64_t>() / 50000.0, 0.5, 0.01);
  EXPECT_EQ(perm.select(1, 0).eq(perm.select(1, 1)).sum().item<int64_t>(), 0);
  // One generator draw per call: the same seed repeats the draw, the next call differs.
  manual_seed(9);
  Tensor a = multinomial(w, 20, true), b = multinomial(w, 20, true);
  manual_seed(9);
  EXPECT_TRUE(equal(multinomial(w, 20, true), a));
  EXPECT_FALSE(equal(a, b));
}

// A replica's rows (a BatchSlice of the batch) draw what the same rows draw in the whole batch, so
// sampling in a data-parallel forward does not depend on the split.
TEST(Multinomial, ABatchSliceDrawsAsTheWholeBatch) {
  manual_seed(6);
  Tensor w = rand({10, 5}) + 0.1;
  manual_seed(6);
  Tensor whole = multinomial(w, 3, false);
  for (int64_t offset : {0, 4, 7}) {
    const int64_t size = offset == 7 ? 3 : 4;
    manual_seed(6);
    BatchSliceScope slice({/*dim=*/0, offset, size, /*total=*/10});
    EXPECT_TRUE(equal(multinomial(w.slice(0, offset, offset + size), 3, false), whole.slice(0, offset, offset + size)))
        << offset;
  }
}

TEST(Multinomial, Errors) {
  using cohort::testing::error_of;
  using ::testing::HasSubstr;
  Tensor w = tensor(std::vector<double>{1, 0, 3});
  EXPECT_THAT(error_of([&] { multinomial(w, 3, false); }),
              HasSubstr("multinomial: cannot draw 3 samples without replacement from 2 categories of non-zero weight"));
  EXPECT_THAT(error_of([&] { multinomial(w, 4, false); }),
              HasSubstr("cannot draw 4 samples without replacement from 3 categories"));
  EXPECT_THAT(error_of([&] { multinomial(w, 0, true); }), HasSubstr("num_samples must be positive, got 0"));
  EXPECT_THAT(error_of([] { multinomial(tensor(std::vector<double>{1, -1}), 1, true); }),
              HasSubstr("weights must be finite and non-negative, got -1 at category 1"));
  EXPECT_THAT(error_of([] { multinomial(zeros({2, 3}), 1, true); }), HasSubstr("the weights of row 0 sum to 0"));
  EXPECT_THAT(error_of([] { multinomial(ones({2, 2, 2}), 1, true); }),
              HasSubstr("expected weights of 1 or 2 dims, got shape [2, 2, 2]"));
}

}  // namespace
