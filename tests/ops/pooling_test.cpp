// Pooling's kernels: the max pool's loops against the plainest ones on random geometries, with NaNs,
// odd sizes and strides; the indices and node names. Values, strided inputs and gradients of the
// ops are in the op table (tests/ops/op_table_nn_test.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <sstream>

#include "cohort/autograd/node.h"
#include "cohort/core/generator.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/pooling.h"
#include "cohort/ops/reduction.h"
#include "ops/cpu/pooling_kernels.h"
#include "support/gradcheck.h"

namespace cohort {
namespace {

TEST(PoolKernels, MaxLoopsMatchReferenceOnRandomShapes) {
  std::mt19937 rng(11);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  manual_seed(12);
  for (int trial = 0; trial < 60; ++trial) {
    const bool ceil_mode = trial % 3 == 0;
    kernel::Pool2dParams p;
    p.kernel = {pick(1, 4), pick(1, 4)};
    p.stride = {pick(1, 3), pick(1, 3)};
    p.padding = {pick(0, p.kernel[0] / 2), pick(0, p.kernel[1] / 2)};
    p.dilation = trial % 4 == 0 ? std::array<int64_t, 2>{pick(1, 2), pick(1, 2)} : std::array<int64_t, 2>{1, 1};
    if (trial % 7 == 2) p = kernel::Pool2dParams{{2, 2}, {2, 2}};  // the 2x2 row loop
    const int64_t H = (p.kernel[0] - 1) * p.dilation[0] + 1 + pick(0, 6);
    const int64_t W = (p.kernel[1] - 1) * p.dilation[1] + 1 + pick(0, 6);
    Tensor x = randn({pick(1, 3), pick(1, 4), H, W});
    if (trial % 5 == 1) x = testing::make_noncontiguous(x);
    std::ostringstream what;
    what << "input " << x.sizes() << " kernel " << IntArrayRef(p.kernel.data(), 2) << " stride "
         << IntArrayRef(p.stride.data(), 2) << " padding " << IntArrayRef(p.padding.data(), 2) << " dilation "
         << IntArrayRef(p.dilation.data(), 2) << " ceil " << ceil_mode;
    SCOPED_TRACE(what.str());
    // The output size from the op, then both kernels on the same geometry.
    auto as_ref = [](const std::array<int64_t, 2>& a) { return IntArrayRef(a.data(), 2); };
    Tensor y = max_pool2d(x, as_ref(p.kernel), as_ref(p.stride), as_ref(p.padding), as_ref(p.dilation), ceil_mode);
    Tensor y_fast = empty(y.sizes()), y_ref = empty(y.sizes()), indices = empty(y.sizes(), kInt64);
    Tensor saved = kernel::max_pool2d_forward(y_fast, x, p);
    kernel::max_pool2d_forward_reference(y_ref, indices, x, p);
    EXPECT_TRUE(equal(y_fast, y_ref)) << "forward";
    EXPECT_TRUE(equal(y, y_ref)) << "op";
    EXPECT_TRUE(equal(saved, indices)) << "argmax";
  }
}

TEST(PoolKernels, MaxLoopsMatchReferenceWithNaNsOddSizesAndStrides) {
  // The 2x2 / stride 2 body and the general one, on odd sizes (the last row and column unused),
  // strided input and NaNs (the first NaN of a window wins, its index too).
  manual_seed(14);
  for (DType dtype : {kFloat32, kFloat64})
    for (int k : {2, 3})
      for (bool strided : {false, true}) {
        Tensor x = randn({2, 3, 9, 11}, dtype);
        x.select(3, 4).select(2, 2).fill_(std::nan(""));  // plane (n, c) = (0..1, 2), h 4
        x.select(3, 5).select(2, 1).fill_(std::nan(""));
        if (strided) x = testing::make_noncontiguous(x);
        kernel::Pool2dParams p;
        p.kernel = {k, k}, p.stride = {2, 2};
        Tensor y = empty({2, 3, 9 / 2 - (k == 3), 11 / 2 - (k == 3)}, dtype), y_ref = empty(y.sizes(), dtype);
        Tensor indices = empty(y.sizes(), kInt64);
        Tensor saved = kernel::max_pool2d_forward(y, x, p);
        kernel::max_pool2d_forward_reference(y_ref, indices, x, p);
        SCOPED_TRACE(::testing::Message() << "dtype " << dtype << " kernel " << k << " strided " << strided);
        EXPECT_TRUE(equal(saved, indices));
        EXPECT_TRUE(equal(isnan(y), isnan(y_ref)));
        EXPECT_TRUE(equal(y.masked_fill(isnan(y), 0), y_ref.masked_fill(isnan(y_ref), 0)));
        EXPECT_GT(isnan(y).sum().item<int64_t>(), 0);
      }
}

TEST(PoolOps, IndicesAndNodeNames) {
  Tensor x = arange(16, kFloat64).reshape({1, 1, 4, 4}).requires_grad_();
  auto [y, indices] = max_pool2d_with_indices(x, 2);
  EXPECT_TRUE(indices.equal(tensor({5, 7, 13, 15}, kInt64).reshape({1, 1, 2, 2})));
  EXPECT_EQ(y.grad_fn()->name(), "MaxPool2DWithIndicesBackward0");
  EXPECT_EQ(avg_pool2d(x, 2).grad_fn()->name(), "AvgPool2DBackward0");
  EXPECT_EQ(adaptive_avg_pool2d(x, 1).grad_fn()->name(), "AdaptiveAvgPool2DBackward0");
  auto [ya, ia] = adaptive_max_pool2d(x, {1, 2});
  EXPECT_TRUE(ia.equal(tensor({13, 15}, kInt64).reshape({1, 1, 1, 2})));
  EXPECT_EQ(ya.grad_fn()->name(), "AdaptiveMaxPool2DBackward0");
}

}  // namespace
}  // namespace cohort
