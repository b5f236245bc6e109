// bfloat16 convolutions in training keep what their forward prepared for the weight gradient: the
// input as oneDNN's kernels read it, or the patch matrix of a layer that runs as matmuls (Note [Kept
// convolution input], Note [bfloat16 small-map convolutions as matmuls] in src/ops/dnnl/conv.cpp).
// The gradients through autograd (which keeps them) must be bit for bit those of the kernels called
// without them; a second backward of a retained graph (the kept copy is gone by then) and an input
// changed in place after the forward behave as without. Test names: ConvKeptInput.*.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "cohort/autograd/engine.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/convolution.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "ops/cpu/conv_kernels.h"
#include "support/error_of.h"

namespace cohort::testing {
namespace {

using ::testing::HasSubstr;

struct Case {
  const char* what;
  Shape x, w;
  bool bias;
  int64_t stride, padding, dilation;
};

// Large maps (the reordered input is kept), maps of at most 4x4 without bias (the patch matrix),
// with bias (neither: the weight gradient reorders), odd channel counts and partial channel blocks.
const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"64 channels on 12x12", {2, 64, 12, 12}, {64, 64, 3, 3}, false, 1, 1, 1},
      {"odd channels, strided, on 9x7", {3, 5, 17, 13}, {7, 5, 3, 3}, false, 2, 1, 1},
      {"with bias on 10x10", {2, 16, 10, 10}, {24, 16, 3, 3}, true, 1, 1, 1},
      {"1x1 stride 2 on 8x8", {2, 48, 16, 16}, {40, 48, 1, 1}, false, 2, 0, 1},
      {"512 channels on 4x4", {2, 512, 4, 4}, {512, 512, 3, 3}, false, 1, 1, 1},
      {"odd channels on a 3x3 map", {3, 17, 5, 5}, {33, 17, 3, 3}, false, 2, 1, 1},
      {"a 1x1 map", {2, 9, 3, 3}, {7, 9, 3, 3}, false, 1, 0, 1},
      {"dilated on 2x4", {5, 5, 6, 8}, {3, 5, 3, 3}, false, 1, 0, 2},
      {"with bias on 4x4", {2, 32, 4, 4}, {16, 32, 3, 3}, true, 1, 1, 1},
  };
  return all;
}

kernel::Conv2dParams params(const Case& c) {
  kernel::Conv2dParams p;
  p.stride = {c.stride, c.stride};
  p.pad_lo = p.pad_hi = {c.padding, c.padding};
  p.dilation = {c.dilation, c.dilation};
  return p;
}

::testing::AssertionResult same_bits(const std::string& what, const Tensor& got, const Tensor& want) {
  if (!got.defined() || !want.defined() || got.dtype() != want.dtype() || got.sizes() != want.sizes())
    return ::testing::AssertionFailure() << what << ": not comparable";
  const Tensor a = got.contiguous(), b = want.contiguous();
  if (std::memcmp(a.data_ptr(), b.data_ptr(), static_cast<size_t>(a.numel()) * a.element_size()) != 0)
    return ::testing::AssertionFailure() << what << ": bits differ";
  return ::testing::AssertionSuccess();
}

Tensor leaf(const Tensor& t) { return t.detach().requires_grad_(true); }

struct Grads {
  Tensor y, dx, dw, db;
};

// The kernels called directly: nothing kept.
Grads direct(const Case& c, const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& g) {
  NoGradGuard no_grad;
  const kernel::Conv2dParams p = params(c);
  Grads r;
  r.y = empty(g.sizes(), TensorOptions(kBFloat16));
  kernel::conv2d_forward(r.y, x, w, b, p);
  r.dx = empty(x.sizes(), TensorOptions(kBFloat16));
  r.dw = empty(w.sizes(), TensorOptions(kBFloat16));
  if (b.defined()) r.db = empty(b.sizes(), TensorOptions(kBFloat16));
  kernel::conv2d_backward(r.dx, r.dw, r.db, g, x, w, p);
  return r;
}

TEST(ConvKeptInput, GradientsAreThoseOfTheKernelsBitForBit) {
  for (const Case& c : cases()) {
    const TensorOptions o(kBFloat16);
    const Tensor x = leaf(randn(c.x, o)), w = leaf(randn(c.w, o) * 0.3);
    const Tensor b = c.bias ? leaf(randn({c.w[0]}, o)) : Tensor();
    const Tensor y = conv2d(x, w, b, c.stride, c.padding, c.dilation);
    const Tensor g = randn(y.sizes(), o);
    y.backward(g);
    const Grads want = direct(c, x.detach(), w.detach(), c.bias ? b.detach() : Tensor(), g);
    EXPECT_TRUE(same_bits(std::string(c.what) + " forward", y.detach(), want.y));
    EXPECT_TRUE(same_bits(std::string(c.what) + " dx", x.grad(), want.dx));
    EXPECT_TRUE(same_bits(std::string(c.what) + " dw", w.grad(), want.dw));
    if (c.bias) EXPECT_TRUE(same_bits(std::string(c.what) + " db", b.grad(), want.db));
  }
}

// The weight alone requires grad (the first layer of a network): the same.
TEST(ConvKeptInput, WeightGradientAlone) {
  for (const Case& c : cases()) {
    const TensorOptions o(kBFloat16);
    const Tensor x = randn(c.x, o), w = leaf(randn(c.w, o) * 0.3);
    const Tensor y = conv2d(x, w, Tensor(), c.stride, c.padding, c.dilation);
    const Tensor g = randn(y.sizes(), o);
    const Tensor dw = autograd::grad({y}, {w}, {g})[0];
    const Grads want = direct(c, x, w.detach(), Tensor(), g);
    EXPECT_TRUE(same_bits(std::string(c.what) + " dw", dw, want.dw));
  }
}

// A retained graph's second backward runs without the kept copy (the first used it up) and gives
// the same bits.
TEST(ConvKeptInput, SecondBackwardOfARetainedGraph) {
  for (const Case& c : cases()) {
    const TensorOptions o(kBFloat16);
    const Tensor x = leaf(randn(c.x, o)), w = leaf(randn(c.w, o) * 0.3);
    const Tensor y = conv2d(x, w, Tensor(), c.stride, c.padding, c.dilation);
    const Tensor g = randn(y.sizes(), o);
    const auto first = autograd::grad({y}, {x, w}, {g}, true);
    const auto second = autograd::grad({y}, {x, w}, {g}, true);
    EXPECT_TRUE(same_bits(std::string(c.what) + " dx", second[0], first[0]));
    EXPECT_TRUE(same_bits(std::string(c.what) + " dw", second[1], first[1]));
  }
}

// Changing the input in place after the forward is still refused, kept copy or not.
TEST(ConvKeptInput, InputChangedInPlaceIsRefused) {
  for (const Case& c : {cases()[0], cases()[4]}) {
    const TensorOptions o(kBFloat16);
    const Tensor x = randn(c.x, o), w = leaf(randn(c.w, o));
    const Tensor y = conv2d(x, w, Tensor(), c.stride, c.padding, c.dilation);
    {
      NoGradGuard no_grad;
      x.mul_(2.0);
    }
    EXPECT_THAT(error_of([&] { y.sum().backward(); }), HasSubstr("modified by an in-place operation"));
  }
}

// Without grad mode, or in float32, nothing is kept and the results are those of the kernels.
TEST(ConvKeptInput, NoGradAndFloat32AreUnchanged) {
  const Case& c = cases()[0];
  {
    const TensorOptions o(kBFloat16);
    const Tensor x = randn(c.x, o), w = leaf(randn(c.w, o));
    NoGradGuard no_grad;
    const Tensor y = conv2d(x, w, Tensor(), c.stride, c.padding, c.dilation);
    EXPECT_FALSE(y.requires_grad());
    const Grads want = direct(c, x, w.detach(), Tensor(), y);
    EXPECT_TRUE(same_bits("no_grad forward", y, want.y));
  }
  const Tensor x = leaf(randn(c.x)), w = leaf(randn(c.w));
  const Tensor y = conv2d(x, w, Tensor(), c.stride, c.padding, c.dilation);
  const Tensor g = randn(y.sizes());
  y.backward(g);
  NoGradGuard no_grad;
  const kernel::Conv2dParams p = params(c);
  Tensor dx = empty(x.sizes()), dw = empty(w.sizes()), out = empty(y.sizes());
  kernel::conv2d_forward(out, x.detach(), w.detach(), Tensor(), p);
  kernel::conv2d_backward(dx, dw, Tensor(), g, x.detach(), w.detach(), p);
  EXPECT_TRUE(same_bits("float32 forward", y.detach(), out));
  EXPECT_TRUE(same_bits("float32 dx", x.grad(), dx));
  EXPECT_TRUE(same_bits("float32 dw", w.grad(), dw));
}

// NaN and infinity in the input of a layer that runs as matmuls reach the outputs they touch, as in
// float64: NaN where the float64 convolution gives NaN, the same infinity where it gives one.
TEST(ConvKeptInput, MatmulForwardPropagatesNaNAndInfinity) {
  const TensorOptions o(kBFloat16);
  Tensor x = randn({2, 16, 4, 4}, o);
  const Tensor w = randn({8, 16, 3, 3}, o).abs();  // positive weights: an infinity keeps its sign
  {
    NoGradGuard no_grad;
    x.select(0, 0).select(0, 3).select(0, 1).select(0, 2).fill_(std::numeric_limits<double>::quiet_NaN());
    x.select(0, 1).select(0, 5).select(0, 0).select(0, 0).fill_(std::numeric_limits<double>::infinity());
    x.select(0, 1).select(0, 6).select(0, 3).select(0, 3).fill_(-std::numeric_limits<double>::infinity());
  }
  const Tensor y = conv2d(x, w, Tensor(), 1, 1).to(kFloat64).contiguous();
  const Tensor Y = conv2d(x.to(kFloat64), w.to(kFloat64), Tensor(), 1, 1).contiguous();
  const double* got = y.data_ptr<double>();
  const double* want = Y.data_ptr<double>();
  int64_t special = 0;
  for (int64_t e = 0; e < Y.numel(); ++e) {
    if (std::isnan(want[e])) {
      EXPECT_TRUE(std::isnan(got[e])) << "element " << e;
      ++special;
    } else if (std::isinf(want[e])) {
      EXPECT_EQ(got[e], want[e]) << "element " << e;
      ++special;
    } else {
      EXPECT_TRUE(std::isfinite(got[e])) << "element " << e;
    }
  }
  EXPECT_GT(special, 0);
}

}  // namespace
}  // namespace cohort::testing
