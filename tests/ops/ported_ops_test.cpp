// flip, roll, unfold, repeat_interleave, scatter, index_add, masked_scatter, nonzero, unique and
// padding where the op table cannot look: errors (each names the op, what it expected and what it
// got), storage sharing, integer inputs and empty results. Expected values are PyTorch 1.13's,
// written out.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/padding.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reorder.h"
#include "cohort/ops/scatter.h"
#include "cohort/ops/unique.h"
#include "support/error_of.h"

namespace cohort {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::error_of;

std::vector<int64_t> ints(const Tensor& t) {
  Tensor c = t.to(kInt64).contiguous();
  return std::vector<int64_t>(c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel());
}

Tensor longs(std::vector<int64_t> v) { return tensor(v); }

TEST(ReorderOps, Errors) {
  EXPECT_THAT(error_of([] { flip(zeros({2, 3}), {0, -2}); }),
              HasSubstr("flip: dim 0 appears multiple times in the list of dims [0, -2]"));
  EXPECT_THROW(flip(zeros({2, 3}), {2}), IndexError);
  EXPECT_THAT(error_of([] { roll(zeros({2, 3}), {1, 2}, {0}); }),
              HasSubstr("roll: shifts and dims must have the same length, got shifts [1, 2] and dims [0]"));
  EXPECT_THAT(error_of([] { roll(zeros({2, 3}), {1, 2}); }),
              HasSubstr("roll: without dims, shifts must have one value, got [1, 2]"));
  EXPECT_THAT(error_of([] { unfold(zeros({2, 3}), 1, 4, 1); }),
              HasSubstr("unfold: maximum size for tensor at dimension 1 is 3 but size is 4"));
  EXPECT_THAT(error_of([] { unfold(zeros({2, 3}), 1, 2, 0); }), HasSubstr("unfold: step must be positive, got 0"));
  EXPECT_THAT(error_of([] { repeat_interleave(zeros({2}), -1); }),
              HasSubstr("repeat_interleave: repeats can not be negative, got -1"));
  EXPECT_THAT(error_of([] { repeat_interleave(zeros({3}), longs({1, 2}), 0); }),
              HasSubstr("repeat_interleave: repeats must have the same size as input along dim (3) or one value, got 2"));
}

TEST(ReorderOps, UnfoldIsAViewAndRepeatInterleaveHasAnIndexForm) {
  Tensor x = arange(6, TensorOptions(kFloat32));
  Tensor w = unfold(x, 0, 3, 3);
  EXPECT_THAT(w.sizes().vec(), ElementsAre(2, 3));
  w.select(0, 1).select(0, 0).fill_(-1);
  EXPECT_EQ(x.select(0, 3).item<float>(), -1.0f);  // writes through the window show in x
  EXPECT_THAT(ints(repeat_interleave(longs({2, 0, 1}))), ElementsAre(0, 0, 2));
  EXPECT_THAT(ints(roll(longs({1, 2, 3, 4}), {-1})), ElementsAre(2, 3, 4, 1));
  EXPECT_THAT(ints(flip(longs({1, 2, 3}), {0})), ElementsAre(3, 2, 1));
}

// Every element NaN is a value of its own, sorted after the numbers: PyTorch 1.13's values
// (0, 1, nan, nan); each NaN counted once (1.13 reports counts 0 and inverse 0 for them).
TEST(UniqueOps, NanIsDistinctAndLast) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto [values, inverse, counts] = _unique2(tensor({nan, 1.0, nan, 0.0, 1.0}, TensorOptions(kFloat64)), true, true, true);
  ASSERT_EQ(values.numel(), 4);
  EXPECT_EQ(values[0].item<double>(), 0.0);
  EXPECT_EQ(values[1].item<double>(), 1.0);
  EXPECT_TRUE(std::isnan(values[2].item<double>()) && std::isnan(values[3].item<double>()));
  EXPECT_THAT(ints(counts), ElementsAre(1, 2, 1, 1));
  EXPECT_THAT(ints(inverse), ElementsAre(2, 1, 3, 0, 1));
}

TEST(ScatterOps, Errors) {
  EXPECT_THAT(error_of([] { scatter(zeros({2, 3}), 1, longs({0, 3}).view({2, 1}), zeros({2, 1})); }),
              HasSubstr("scatter: index 3 is out of bounds for dimension 1 with size 3"));
  EXPECT_THAT(error_of([] { scatter(zeros({2, 3}), 1, longs({0, 1}), zeros({2})); }),
              HasSubstr("scatter: index [2], src [2] and self [2, 3] must have the same number of dimensions"));
  EXPECT_THAT(error_of([] { scatter(zeros({2, 3}), 1, longs({0, 1}).view({2, 1}), zeros({2, 1}, TensorOptions(kFloat64))); }),
              HasSubstr("scatter: expected self and src to have the same dtype, got float32 and float64"));
  EXPECT_THAT(error_of([] { index_add(zeros({4, 3}), 0, longs({0, 1}), zeros({3, 3})); }),
              HasSubstr("index_add: index has 2 entries but source [3, 3] has 3 slices along dimension 0"));
  EXPECT_THAT(error_of([] { index_add(zeros({4, 3}), 0, longs({0, 4}), zeros({2, 3})); }),
              HasSubstr("index_add: index 4 is out of bounds for dimension 0 with size 4"));
  EXPECT_THAT(error_of([] { masked_scatter(zeros({2, 2}), ones({2, 2}, TensorOptions(kBool)), zeros({3})); }),
              HasSubstr("masked_scatter: mask has 4 true values but source [3] has only 3 elements"));
}

TEST(ScatterOps, IntegerTensors) {
  Tensor x = zeros({2, 3}, TensorOptions(kInt64));
  EXPECT_THAT(ints(scatter(x, 1, longs({2, 0}).view({2, 1}), 7)), ElementsAre(0, 0, 7, 7, 0, 0));
  EXPECT_THAT(ints(index_add(x, 1, longs({1, 1}), longs({1, 2, 3, 4}).view({2, 2}))), ElementsAre(0, 3, 0, 0, 7, 0));
}

TEST(UniqueOps, ResultsNotAskedForAreEmptyAndNonzeroOfNothingHasNoRows) {
  auto [values, inverse, counts] = _unique2(longs({3, 1, 3, 2}));
  EXPECT_THAT(ints(values), ElementsAre(1, 2, 3));
  EXPECT_THAT(inverse.sizes().vec(), ElementsAre(0));
  EXPECT_THAT(counts.sizes().vec(), ElementsAre(0));
  auto [v2, inv2] = _unique(longs({3, 1, 3}), true, true);
  EXPECT_THAT(ints(inv2), ElementsAre(1, 0, 1));
  EXPECT_THAT(nonzero(zeros({2, 3})).sizes().vec(), ElementsAre(0, 2));
  EXPECT_EQ(nonzero(zeros({2, 3})).dtype(), kInt64);
  auto [rows, rinv, rcounts] = unique(longs({1, 2, 1, 2, 0, 0}).view({3, 2}), true, true, true, 0);
  EXPECT_THAT(ints(rows), ElementsAre(0, 0, 1, 2));
  EXPECT_THAT(ints(rinv), ElementsAre(1, 1, 0));
  EXPECT_THAT(ints(rcounts), ElementsAre(1, 2));
  EXPECT_THROW(unique_dim(zeros({2}), 1), IndexError);
}

// libtorch's method spellings give the free functions' results.
TEST(PortedOps, TensorMethods) {
  Tensor x = arange(6, TensorOptions(kInt64)).view({2, 3});
  EXPECT_THAT(ints(x.flip({1})), ElementsAre(2, 1, 0, 5, 4, 3));
  EXPECT_THAT(ints(x.roll({1}, {1})), ElementsAre(2, 0, 1, 5, 3, 4));
  EXPECT_THAT(x.unfold(1, 2, 1).sizes().vec(), ElementsAre(2, 2, 2));
  EXPECT_THAT(ints(x.repeat_interleave(2, 0)), ElementsAre(0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5));
  EXPECT_THAT(ints(x.repeat_interleave(longs({0, 1}), 0)), ElementsAre(3, 4, 5));
  EXPECT_THAT(ints(x.nonzero()), ElementsAre(0, 1, 0, 2, 1, 0, 1, 1, 1, 2));
  Tensor index = longs({2, 0}).view({2, 1});
  EXPECT_THAT(ints(x.scatter(1, index, -1)), ElementsAre(0, 1, -1, -1, 4, 5));
  EXPECT_THAT(ints(x.scatter_add(1, index, longs({10, 20}).view({2, 1}))), ElementsAre(0, 1, 12, 23, 4, 5));
  EXPECT_THAT(ints(x.index_add(0, longs({1}), longs({1, 1, 1}).view({1, 3}))), ElementsAre(0, 1, 2, 4, 5, 6));
  EXPECT_THAT(ints(x.masked_scatter(x.gt(3), longs({7, 8}))), ElementsAre(0, 1, 2, 3, 7, 8));
  EXPECT_THAT(ints(cohort::max(x, longs({1, 1, 9}))), ElementsAre(1, 1, 9, 3, 4, 9));
  EXPECT_THAT(ints(cohort::min(x, longs({1, 1, 9}))), ElementsAre(0, 1, 2, 1, 1, 5));
}

TEST(PortedOps, InPlaceForms) {
  Tensor x = arange(6, TensorOptions(kInt64)).view({2, 3});
  Tensor y = x.clone();
  EXPECT_TRUE(&y.scatter_(1, longs({0, 0}).view({2, 1}), 9) == &y);
  EXPECT_THAT(ints(y), ElementsAre(9, 1, 2, 9, 4, 5));
  y.index_add_(1, longs({2}), longs({1, 1}).view({2, 1}));
  EXPECT_THAT(ints(y), ElementsAre(9, 1, 3, 9, 4, 6));
  y.masked_scatter_(y.eq(9), longs({-1, -2}));
  EXPECT_THAT(ints(y), ElementsAre(-1, 1, 3, -2, 4, 6));
  y.scatter_add_(0, longs({1, 1, 1}).view({1, 3}), longs({1, 1, 1}).view({1, 3}));
  EXPECT_THAT(ints(y), ElementsAre(-1, 1, 3, -1, 5, 7));
  Tensor z = x.clone();
  z.unsqueeze_(0);
  EXPECT_THAT(z.sizes().vec(), ElementsAre(1, 2, 3));
  z.squeeze_();
  z.t_();
  EXPECT_THAT(z.sizes().vec(), ElementsAre(3, 2));
  EXPECT_THAT(ints(z), ElementsAre(0, 3, 1, 4, 2, 5));
  z.transpose_(0, 1).unsqueeze_(-1).squeeze_(2);
  EXPECT_THAT(ints(z), ElementsAre(0, 1, 2, 3, 4, 5));
  Tensor leaf = zeros({2}, TensorOptions(kFloat64)).requires_grad_();
  EXPECT_THAT(error_of([&] { leaf.unsqueeze_(0); }), HasSubstr("unsqueeze_: a leaf tensor that requires grad"));
}

TEST(PaddingOps, Errors) {
  EXPECT_THAT(error_of([] { reflection_pad1d(zeros({1, 3}), {3, 0}); }),
              HasSubstr("reflection_pad1d: padding size should be less than the corresponding input dimension, got "
                        "padding (3, 0) at dimension 1 of input [1, 3]"));
  EXPECT_THAT(error_of([] { reflection_pad2d(zeros({3, 3}), {1, 1, 1, 1}); }),
              HasSubstr("reflection_pad2d: expected a 3-d or 4-d input, got shape [3, 3]"));
  EXPECT_THAT(error_of([] { replication_pad1d(zeros({1, 3}), {1}); }),
              HasSubstr("replication_pad1d: expected padding to have 2 values, got [1]"));
  EXPECT_THAT(error_of([] { constant_pad_nd(zeros({3}), {1, 1, 1}); }),
              HasSubstr("constant_pad_nd: padding length must be divisible by 2, got 3 values [1, 1, 1]"));
  EXPECT_THAT(error_of([] { constant_pad_nd(zeros({3}), {-2, -2}); }),
              HasSubstr("constant_pad_nd: the input size 3 at dimension 0 plus padding -2 and -2 is negative"));
  EXPECT_THAT(ints(constant_pad_nd(longs({1, 2}), {1, 0}, 9)), ElementsAre(9, 1, 2));
}

}  // namespace
}  // namespace cohort
