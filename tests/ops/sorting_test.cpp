// sort, argsort, topk, cumsum, tril and triu where the op table cannot look: ties, NaN, integer and
// bool inputs, 0-d inputs and errors. Expected values are PyTorch 1.13's (torch.sort(..., stable=True),
// torch.topk, torch.cumsum, torch.tril), written out.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cohort/ops/creation.h"
#include "cohort/ops/linalg.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/sorting.h"
#include "support/error_of.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;
using testing::error_of;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<int64_t> ints(const Tensor& t) {
  Tensor c = t.to(kInt64).contiguous();
  return {c.data_ptr<int64_t>(), c.data_ptr<int64_t>() + c.numel()};
}

TEST(Sort, NaNSortsAboveEveryNumberAndTiesKeepTheirOrder) {
  Tensor x = tensor(std::vector<double>{1, kNaN, 0, kNaN, -1});
  auto [v, i] = sort(x);
  EXPECT_EQ(ints(i), (std::vector<int64_t>{4, 2, 0, 1, 3}));
  EXPECT_TRUE(allclose(v, tensor(std::vector<double>{-1, 0, 1, kNaN, kNaN}), 0, 0, /*equal_nan=*/true));
  auto [vd, id] = sort(x, 0, true);
  EXPECT_EQ(ints(id), (std::vector<int64_t>{1, 3, 0, 2, 4}));
  auto [tv, ti] = topk(tensor(std::vector<double>{1, kNaN, 2}), 2);
  EXPECT_EQ(ints(ti), (std::vector<int64_t>{1, 2}));
  Tensor ties = tensor(std::vector<int64_t>{2, 1, 2, 1, 2});
  EXPECT_EQ(ints(argsort(ties)), (std::vector<int64_t>{1, 3, 0, 2, 4}));
  EXPECT_EQ(ints(argsort(ties, 0, true)), (std::vector<int64_t>{0, 2, 4, 1, 3}));
  EXPECT_EQ(ints(std::get<1>(topk(ties, 3))), (std::vector<int64_t>{0, 2, 4}));
}

TEST(Sort, ZeroDimAndEmptyInputs) {
  Tensor x = tensor(3.0);
  auto [v, i] = sort(x);
  EXPECT_EQ(v.dim(), 0);
  EXPECT_EQ(i.item<int64_t>(), 0);
  EXPECT_EQ(std::get<0>(topk(x, 1)).item<double>(), 3.0);
  EXPECT_EQ(argsort(x).item<int64_t>(), 0);
  auto [ve, ie] = topk(randn({3, 4}), 0);
  EXPECT_EQ(ve.sizes(), (Shape{3, 0}));
  EXPECT_EQ(ie.dtype(), kInt64);
  EXPECT_EQ(std::get<0>(sort(zeros({0, 2}), 0)).sizes(), (Shape{0, 2}));
}

TEST(Sort, Errors) {
  EXPECT_THAT(error_of([] { topk(randn({2, 3}), 4); }),
              HasSubstr("topk: k must be in [0, 3] (the size of dim 1 of input [2, 3]), got 4"));
  EXPECT_THAT(error_of([] { topk(randn({2, 3}), -1); }), HasSubstr("topk: k must be in [0, 3]"));
  EXPECT_THAT(error_of([] { sort(randn({2, 3}), 2); }), HasSubstr("sort"));
  EXPECT_THAT(error_of([] { argsort(randn({2}), -2); }), HasSubstr("argsort"));
}

TEST(Cumsum, IntegerAndBoolGiveInt64AndDtypeConverts) {
  Tensor b = tensor(std::vector<int64_t>{1, 0, 1}).to(kBool);
  Tensor c = cumsum(b, 0);
  EXPECT_EQ(c.dtype(), kInt64);
  EXPECT_EQ(ints(c), (std::vector<int64_t>{1, 1, 2}));
  EXPECT_EQ(cumsum(tensor(std::vector<int64_t>{1, 2}).to(kInt32), 0).dtype(), kInt64);
  Tensor f = cumsum(tensor(std::vector<int64_t>{1, 2, 3}), 0, kFloat32);
  EXPECT_EQ(f.dtype(), kFloat32);
  EXPECT_TRUE(allclose(f, tensor(std::vector<float>{1, 3, 6})));
  EXPECT_EQ(cumsum(tensor(2.0), 0).item<double>(), 2.0);
  // A long float32 lane accumulates in double: 1e6 additions of 0.1 stay within float32 rounding.
  Tensor lane = full({1000000}, 0.1, TensorOptions(kFloat32));
  EXPECT_NEAR(cumsum(lane, 0)[-1].item<double>(), 100000.0, 0.01);
  EXPECT_THAT(error_of([] { cumsum(randn({2, 3}), 2); }), HasSubstr("cumsum"));
}

TEST(Triangle, NaNOutsideTheTriangleBecomesZeroAndBoolWorks) {
  Tensor x = tensor(std::vector<double>{kNaN, 1, 2, 3}).view({2, 2});
  Tensor lower = tril(x);
  EXPECT_TRUE(std::isnan(lower[0][0].item<double>()));
  EXPECT_EQ(lower[0][1].item<double>(), 0.0);
  EXPECT_EQ(lower[1][0].item<double>(), 2.0);
  Tensor b = ones({2, 2}, TensorOptions(kBool));
  EXPECT_EQ(tril(b).dtype(), kBool);
  EXPECT_EQ(ints(tril(b)), (std::vector<int64_t>{1, 0, 1, 1}));
  EXPECT_EQ(ints(triu(b)), (std::vector<int64_t>{1, 1, 0, 1}));
  EXPECT_THAT(error_of([] { tril(randn({3})); }),
              HasSubstr("tril: expected a tensor of at least 2 dims [..., m, n], got shape [3]"));
}

TEST(Baddbmm, BetaZeroIgnoresTheInputAndShapesAreChecked) {
  Tensor a = randn({2, 3, 4}), b = randn({2, 4, 5});
  Tensor nan_input = full({2, 3, 5}, kNaN, TensorOptions(kFloat32));
  EXPECT_TRUE(allclose(baddbmm(nan_input, a, b, 0, 1), bmm(a, b)));
  EXPECT_THAT(error_of([&] { baddbmm(randn({3, 4}), a, b); }),
              HasSubstr("baddbmm: expected an input that broadcasts to [2, 3, 5], got input of shape [3, 4]"));
}

}  // namespace
}  // namespace cohort
