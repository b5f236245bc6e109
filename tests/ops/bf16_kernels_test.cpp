// The layer kernels in bfloat16 (and float16): matmul, convolution (forward, both backwards,
// grouped, strided, dilated, 1-d, transposed), pooling, batch_norm (narrow input with float32 or
// narrow parameters), nll_loss and cross_entropy, each against float64 on the same rounded inputs,
// forward and backward; the dtype errors; and PyTorch 1.13's bfloat16 conv2d and mixed batch_norm
// (tests/fixtures/reduced_kernels.json). Test names: Bf16Kernels.*.
//
// Note [Narrow kernel tolerance]
// A narrow kernel computes in float32 (oneDNN's bfloat16 kernels: exact bfloat16 products, float32
// sums) and rounds its result once. Against float64 on the same inputs, element e may so differ by
//   u_out |want_e| + K u_32 mag_e
// where u_out is the output's unit roundoff (2^-8 bfloat16, 2^-11 float16, 2^-24 float32), u_32 =
// 2^-24, K the number of terms summed into the element (the reduction length) and mag_e the sum of
// their magnitudes (the same op on |inputs|, in float64): the rounding into the output, plus the
// standard bound on a float32 sum of K terms in any order. Cancellation is covered by the second
// term, not by a blanket absolute slack. Below the output's smallest normal number the rounding is
// absolute, not relative: up to half the subnormal spacing (2^-25 float16, 2^-134 bfloat16), added
// to the bound as the rounding model's own term (a float16 result of 2.4e-5 may be off by 3e-8).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <string>

#include "cohort/autograd/engine.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/core/generator.h"
#include "cohort/core/half.h"
#include "cohort/ops/backend.h"
#include "cohort/ops/convolution.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/linalg.h"
#include "cohort/ops/loss.h"
#include "cohort/ops/normalization.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/pooling.h"
#include "cohort/ops/reduction.h"
#include "ops/dnnl/bfloat16.h"
#include "support/error_of.h"
#include "support/pytorch_fixture.h"

namespace cohort::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

double unit_roundoff(DType t) {
  return t == kBFloat16 ? std::ldexp(1.0, -8) : t == kHalf ? std::ldexp(1.0, -11) : std::ldexp(1.0, -24);
}

// Half the spacing of `t`'s subnormal numbers: the most a rounding into them can move a value.
double half_subnormal_spacing(DType t) {
  return t == kBFloat16 ? std::ldexp(1.0, -134) : t == kHalf ? std::ldexp(1.0, -25) : std::ldexp(1.0, -150);
}

// got (of dtype `dtype`) against want (float64) within Note [Narrow kernel tolerance]; mag: the
// sum of the terms' magnitudes per element (want's shape), K the reduction length.
::testing::AssertionResult within_bound(const std::string& what, const Tensor& got, DType dtype, const Tensor& want,
                                        const Tensor& mag, double K) {
  if (got.dtype() != dtype)
    return ::testing::AssertionFailure() << what << ": dtype " << got.dtype() << ", expected " << dtype;
  if (got.sizes() != want.sizes())
    return ::testing::AssertionFailure() << what << ": shape " << got.sizes() << ", expected " << want.sizes();
  const Tensor g = got.detach().to(kFloat64).contiguous(), w = want.detach().to(kFloat64).contiguous(),
               m = mag.detach().to(kFloat64).contiguous();
  const double u = unit_roundoff(dtype), u32 = std::ldexp(1.0, -24), subnormal = half_subnormal_spacing(dtype);
  const double *gp = g.data_ptr<double>(), *wp = w.data_ptr<double>(), *mp = m.data_ptr<double>();
  for (int64_t e = 0; e < w.numel(); ++e) {
    const double bound = u * std::abs(wp[e]) + K * u32 * mp[e] + subnormal;
    if (!(std::abs(gp[e] - wp[e]) <= bound))
      return ::testing::AssertionFailure() << what << " element " << e << ": expected " << wp[e] << ", got " << gp[e]
                                           << " (bound " << bound << ")";
  }
  return ::testing::AssertionSuccess();
}

Tensor f64(const Tensor& t) { return t.detach().to(kFloat64); }
Tensor leaf(const Tensor& t) { return t.detach().requires_grad_(true); }

// A float16 result in the subnormal range, rounded once, is within the bound (a random avg_pool2d
// gradient of -2.3802e-5 came out as -2.3782e-5, the nearest float16, and was refused).
TEST(Bf16Kernels, TheToleranceAllowsForTheRoundingOfSubnormals) {
  const Tensor want = full({1}, -2.3802e-5, TensorOptions(kFloat64));
  EXPECT_TRUE(within_bound("a float16 subnormal", want.to(kHalf), kHalf, want, want.abs(), 1));
  EXPECT_FALSE(within_bound("a float16 subnormal a step further off", want.to(kHalf) + std::ldexp(1.0, -24), kHalf, want,
                            want.abs(), 1));
}

TEST(Bf16Kernels, ReportsTheImplementations) {
  std::cout << "[ bfloat16 ] matmul: " << kernel::bfloat16_matmul_implementation()
            << ", convolution: " << kernel::bfloat16_conv_implementation() << "\n";
}

// --- matmul ----------------------------------------------------------------------------------

TEST(Bf16Kernels, MatmulLayoutsAgainstFloat64) {
  for (DType t : {kBFloat16, kHalf}) {
    const TensorOptions o(t);
    const Tensor a = randn({37, 300}, o), b = randn({300, 45}, o);
    struct Case {
      const char* what;
      Tensor a, b;
    };
    const std::vector<Case> cases = {
        {"plain", a, b},
        {"a transposed", a.t().contiguous().t(), b},
        {"b transposed", a, b.t().contiguous().t()},
        {"both transposed", a.t().contiguous().t(), b.t().contiguous().t()},
        {"strided columns", randn({37, 600}, o).slice(1, 0, 600, 2), b},
        {"row slice", a.slice(0, 3, 30), b},
        {"vector", a, b.select(1, 0).unsqueeze(1)},
    };
    for (const Case& c : cases) {
      const Tensor got = mm(c.a, c.b);
      EXPECT_TRUE(within_bound(std::string("mm ") + c.what + " in " + dtype_name(t), got, t, mm(f64(c.a), f64(c.b)),
                               mm(f64(c.a).abs(), f64(c.b).abs()), static_cast<double>(c.a.size(1))));
    }
    // Batched, with an operand expanded over the batch.
    const Tensor x = randn({4, 20, 64}, o), y = randn({64, 24}, o).unsqueeze(0).expand({4, 64, 24});
    EXPECT_TRUE(within_bound(std::string("bmm expanded in ") + dtype_name(t), bmm(x, y), t, bmm(f64(x), f64(y)),
                             bmm(f64(x).abs(), f64(y).abs()), 64));
  }
}

TEST(Bf16Kernels, MatmulBackward) {
  const Tensor a = leaf(randn({33, 70}, TensorOptions(kBFloat16))), b = leaf(randn({70, 21}, TensorOptions(kBFloat16)));
  const Tensor g = randn({33, 21}, TensorOptions(kBFloat16));
  mm(a, b).backward(g);
  const Tensor A = f64(a), B = f64(b), G = f64(g);
  EXPECT_TRUE(within_bound("mm da", a.grad(), kBFloat16, mm(G, B.t()), mm(G.abs(), B.abs().t()), 21));
  EXPECT_TRUE(within_bound("mm db", b.grad(), kBFloat16, mm(A.t(), G), mm(A.abs().t(), G.abs()), 33));
}

// --- convolution -----------------------------------------------------------------------------

struct ConvCase {
  const char* what;
  Shape x, w;
  bool bias;
  int64_t stride, padding, dilation, groups;
};

const std::vector<ConvCase>& conv_cases() {
  static const std::vector<ConvCase> cases = {
      {"3x3 pad 1 with bias", {2, 16, 12, 12}, {32, 16, 3, 3}, true, 1, 1, 1, 1},
      {"ResNet-like 64 channels", {2, 64, 14, 14}, {64, 64, 3, 3}, false, 1, 1, 1, 1},
      {"strided 5x5", {3, 8, 17, 15}, {12, 8, 5, 5}, true, 2, 2, 1, 1},
      {"dilated", {2, 8, 16, 16}, {8, 8, 3, 3}, false, 1, 2, 2, 1},
      {"grouped", {2, 12, 10, 10}, {18, 4, 3, 3}, true, 1, 1, 1, 3},
      {"depthwise", {2, 16, 9, 9}, {16, 1, 3, 3}, true, 1, 1, 1, 16},
      {"1x1", {4, 32, 7, 7}, {24, 32, 1, 1}, true, 1, 0, 1, 1},
      {"odd channels", {1, 3, 11, 11}, {5, 3, 3, 3}, true, 1, 0, 1, 1},
      // bfloat16 layers without bias on maps of at most 4x4 take the weight gradient as a matmul
      // (Note [bfloat16 weight gradient as a matmul] in src/ops/dnnl/conv.cpp); larger maps do not.
      {"strided 5x5 without bias on a 4x4 map", {3, 8, 7, 8}, {12, 8, 5, 5}, false, 2, 2, 1, 1},
      {"1x1 stride 2 without bias", {4, 32, 7, 7}, {48, 32, 1, 1}, false, 2, 0, 1, 1},
      {"3x3 stride 2 pad 2 on 5x6", {2, 24, 5, 6}, {16, 24, 3, 3}, false, 2, 2, 1, 1},
      {"dilated without bias on a 4x3 map", {2, 8, 6, 5}, {8, 8, 3, 3}, false, 1, 1, 2, 1},
      {"512 channels on 4x4 maps", {2, 512, 4, 4}, {512, 512, 3, 3}, false, 1, 1, 1, 1},
      // ... and so the forward of those layers (Note [bfloat16 small-map convolutions as matmuls]):
      // odd channel counts, a 1x1 map, a 2x4 one.
      {"odd channels without bias on a 3x3 map", {3, 17, 5, 5}, {33, 17, 3, 3}, false, 2, 1, 1, 1},
      {"a 1x1 output map", {2, 9, 3, 3}, {7, 9, 3, 3}, false, 1, 0, 1, 1},
      {"5 channels on 2x4 maps", {5, 5, 4, 8}, {3, 5, 3, 3}, false, 2, 1, 1, 1},
      {"without bias on a 20x20 map", {2, 16, 20, 20}, {16, 16, 3, 3}, false, 1, 1, 1, 1},
  };
  return cases;
}

// The convolution's forward and its three gradients in dtype t, each within Note [Narrow kernel
// tolerance] of float64 on the same values.
void check_conv(const ConvCase& c, DType t) {
  const TensorOptions o(t);
  const std::string what = std::string("conv2d ") + c.what + " in " + dtype_name(t);
  const Tensor x = leaf(randn(c.x, o)), w = leaf(randn(c.w, o) * 0.3);
  const Tensor b = c.bias ? leaf(randn({c.w[0]}, o)) : Tensor();
  const Tensor y = conv2d(x, w, b, c.stride, c.padding, c.dilation, c.groups);
  const Tensor g = randn(y.sizes(), o);
  y.backward(g);

  const Tensor X = leaf(f64(x)), W = leaf(f64(w)), B = c.bias ? leaf(f64(b)) : Tensor();
  const Tensor Y = conv2d(X, W, B, c.stride, c.padding, c.dilation, c.groups);
  Y.backward(f64(g));
  const Tensor Xa = leaf(f64(x).abs()), Wa = leaf(f64(w).abs()), Ba = c.bias ? leaf(f64(b).abs()) : Tensor();
  const Tensor Ya = conv2d(Xa, Wa, Ba, c.stride, c.padding, c.dilation, c.groups);
  Ya.backward(f64(g).abs());

  const double taps = static_cast<double>(c.w[2] * c.w[3]);
  const double k_fwd = static_cast<double>(c.w[1]) * taps + 1;
  const double k_dx = static_cast<double>(c.w[0] / c.groups) * taps;
  const double k_dw = static_cast<double>(y.size(0) * y.size(2) * y.size(3));
  EXPECT_TRUE(within_bound(what + " forward", y, t, Y, Ya, k_fwd));
  EXPECT_TRUE(within_bound(what + " dx", x.grad(), t, X.grad(), Xa.grad(), k_dx));
  EXPECT_TRUE(within_bound(what + " dw", w.grad(), t, W.grad(), Wa.grad(), k_dw));
  if (c.bias) EXPECT_TRUE(within_bound(what + " db", b.grad(), t, B.grad(), Ba.grad(), k_dw));
}

TEST(Bf16Kernels, Conv2dForwardAndBackward) {
  for (const ConvCase& c : conv_cases()) check_conv(c, kBFloat16);
}

TEST(Bf16Kernels, Conv2dFloat16RunsWidened) {
  for (const ConvCase& c : conv_cases()) check_conv(c, kHalf);
}

// Every algorithm setting keeps bfloat16 on the direct kernel (Winograd is float32 only).
TEST(Bf16Kernels, Conv2dUnderEveryAlgorithmSetting) {
  const ConvAlgorithm before = conv_algorithm();
  for (ConvAlgorithm a : {ConvAlgorithm::Winograd, ConvAlgorithm::Direct, ConvAlgorithm::Auto}) {
    set_conv_algorithm(a);
    check_conv({"winograd-shaped", {4, 64, 16, 16}, {64, 64, 3, 3}, true, 1, 1, 1, 1}, kBFloat16);
  }
  set_conv_algorithm(before);
}

TEST(Bf16Kernels, Conv1dAndTransposed) {
  const TensorOptions o(kBFloat16);
  {
    const Tensor x = leaf(randn({3, 8, 40}, o)), w = leaf(randn({6, 8, 5}, o)), b = leaf(randn({6}, o));
    const Tensor y = conv1d(x, w, b, 2, 2);
    const Tensor g = randn(y.sizes(), o);
    y.backward(g);
    const Tensor X = leaf(f64(x)), W = leaf(f64(w)), B = leaf(f64(b));
    conv1d(X, W, B, 2, 2).backward(f64(g));
    const Tensor Xa = leaf(f64(x).abs()), Wa = leaf(f64(w).abs()), Ba = leaf(f64(b).abs());
    const Tensor Ya = conv1d(Xa, Wa, Ba, 2, 2);
    Ya.backward(f64(g).abs());
    EXPECT_TRUE(within_bound("conv1d forward", y, kBFloat16, conv1d(X, W, B, 2, 2), Ya, 41));
    EXPECT_TRUE(within_bound("conv1d dx", x.grad(), kBFloat16, X.grad(), Xa.grad(), 30));
    EXPECT_TRUE(within_bound("conv1d dw", w.grad(), kBFloat16, W.grad(), Wa.grad(), 60));
  }
  {
    // conv_transpose2d: its forward is the convolution's backward-data kernel, with output_padding.
    const Tensor x = leaf(randn({2, 8, 7, 7}, o)), w = leaf(randn({8, 6, 3, 3}, o) * 0.3), b = leaf(randn({6}, o));
    const Tensor y = conv_transpose2d(x, w, b, 2, 1, 1);
    const Tensor g = randn(y.sizes(), o);
    y.backward(g);
    const Tensor X = leaf(f64(x)), W = leaf(f64(w)), B = leaf(f64(b));
    const Tensor Y = conv_transpose2d(X, W, B, 2, 1, 1);
    Y.backward(f64(g));
    const Tensor Xa = leaf(f64(x).abs()), Wa = leaf(f64(w).abs()), Ba = leaf(f64(b).abs());
    const Tensor Ya = conv_transpose2d(Xa, Wa, Ba, 2, 1, 1);
    Ya.backward(f64(g).abs());
    // The bias is added by a bfloat16 add after the kernel: one more rounding, of a value no larger
    // than mag, i.e. u mag = 2^16 u_32 mag more.
    EXPECT_TRUE(within_bound("conv_transpose2d forward", y, kBFloat16, Y, Ya, 8 * 9 + 1 + 65536));
    EXPECT_TRUE(within_bound("conv_transpose2d dx", x.grad(), kBFloat16, X.grad(), Xa.grad(), 6 * 9));
    EXPECT_TRUE(within_bound("conv_transpose2d dw", w.grad(), kBFloat16, W.grad(), Wa.grad(), 2 * 49));
    EXPECT_TRUE(within_bound("conv_transpose2d db", b.grad(), kBFloat16, B.grad(), Ba.grad(), 2 * 14 * 14));
  }
}

// Double backward (create_graph) composes the same bfloat16 kernels.
TEST(Bf16Kernels, Conv2dDoubleBackward) {
  const TensorOptions o(kBFloat16);
  const Tensor x = leaf(randn({2, 4, 6, 6}, o)), w = leaf(randn({5, 4, 3, 3}, o));
  const Tensor y = conv2d(x, w, Tensor(), 1, 1);
  const auto gx = autograd::grad({y.pow(2).sum()}, {x}, {}, true, true);
  ASSERT_EQ(gx.size(), 1u);
  EXPECT_EQ(gx[0].dtype(), kBFloat16);
  gx[0].sum().backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().dtype(), kBFloat16);
  const Tensor X = leaf(f64(x)), W = leaf(f64(w));
  const auto GX = autograd::grad({conv2d(X, W, Tensor(), 1, 1).pow(2).sum()}, {X}, {}, true, true);
  GX[0].sum().backward();
  // Several roundings deep (y, y^2's gradient, then two convolutions): a looser relative check.
  EXPECT_LT(max_abs_diff(w.grad(), W.grad()), 0.05 * (1 + W.grad().abs().max().item<double>()));
}

TEST(Bf16Kernels, ConvolutionDTypeErrors) {
  const Tensor xb = randn({1, 2, 5, 5}, TensorOptions(kBFloat16)), wf = randn({3, 2, 3, 3});
  EXPECT_THAT(error_of([&] { conv2d(xb, wf); }),
              AllOf(HasSubstr("conv2d"), HasSubstr("same dtype"), HasSubstr("bfloat16"), HasSubstr("float32")));
  EXPECT_THAT(error_of([&] { conv2d(xb, wf.to(kBFloat16), randn({3})); }),
              AllOf(HasSubstr("conv2d"), HasSubstr("bias"), HasSubstr("float32"), HasSubstr("bfloat16")));
  EXPECT_THAT(error_of([&] { conv2d(xb, wf.to(kHalf)); }),
              AllOf(HasSubstr("conv2d"), HasSubstr("bfloat16"), HasSubstr("float16")));
  EXPECT_THAT(error_of([&] { conv_transpose2d(xb, randn({2, 3, 3, 3})); }),
              AllOf(HasSubstr("conv_transpose2d"), HasSubstr("bfloat16"), HasSubstr("float32")));
}

// --- pooling ---------------------------------------------------------------------------------

TEST(Bf16Kernels, PoolingForwardAndBackward) {
  for (DType t : {kBFloat16, kHalf}) {
    const TensorOptions o(t);
    const std::string in = std::string(" in ") + dtype_name(t);
    const Tensor x = leaf(randn({2, 3, 11, 9}, o));
    const Tensor X = leaf(f64(x));
    {  // max: exact forward (a maximum of narrow values is one); overlapping windows sum gradients
      const Tensor y = max_pool2d(x, 3, 2, 1);
      const Tensor Y = max_pool2d(X, 3, 2, 1);
      EXPECT_EQ(y.dtype(), t);
      EXPECT_TRUE(f64(y).equal(f64(Y))) << "max_pool2d" << in;
      const Tensor g = randn(y.sizes(), o);
      y.backward(g);
      Y.backward(f64(g));
      const Tensor Xa = leaf(f64(x));
      max_pool2d(Xa, 3, 2, 1).backward(f64(g).abs());
      EXPECT_TRUE(within_bound("max_pool2d dx" + in, x.grad(), t, X.grad(), Xa.grad(), 4));
    }
    x.mutable_grad() = Tensor();
    X.mutable_grad() = Tensor();
    {  // avg
      const Tensor y = avg_pool2d(x, 3, 2, 1, false, false);
      const Tensor Y = avg_pool2d(X, 3, 2, 1, false, false);
      const Tensor Xa = leaf(f64(x).abs());
      const Tensor Ya = avg_pool2d(Xa, 3, 2, 1, false, false);
      EXPECT_TRUE(within_bound("avg_pool2d" + in, y, t, Y, Ya, 9));
      const Tensor g = randn(y.sizes(), o);
      y.backward(g);
      Y.backward(f64(g));
      Ya.backward(f64(g).abs());
      EXPECT_TRUE(within_bound("avg_pool2d dx" + in, x.grad(), t, X.grad(), Xa.grad(), 4));
    }
    x.mutable_grad() = Tensor();
    X.mutable_grad() = Tensor();
    {  // adaptive avg and max
      const Tensor y = adaptive_avg_pool2d(x, {4, 3});
      const Tensor Y = adaptive_avg_pool2d(X, {4, 3});
      const Tensor Xa = leaf(f64(x).abs());
      const Tensor Ya = adaptive_avg_pool2d(Xa, {4, 3});
      EXPECT_TRUE(within_bound("adaptive_avg_pool2d" + in, y, t, Y, Ya, 12));
      const Tensor g = randn(y.sizes(), o);
      y.backward(g);
      Y.backward(f64(g));
      Ya.backward(f64(g).abs());
      EXPECT_TRUE(within_bound("adaptive_avg_pool2d dx" + in, x.grad(), t, X.grad(), Xa.grad(), 4));
      const auto [m, mi] = adaptive_max_pool2d(x, {5, 4});
      const auto [M, MI] = adaptive_max_pool2d(X, {5, 4});
      EXPECT_EQ(m.dtype(), t);
      EXPECT_TRUE(f64(m).equal(f64(M))) << "adaptive_max_pool2d" << in;
      EXPECT_TRUE(mi.equal(MI)) << "adaptive_max_pool2d indices" << in;
    }
  }
}

// --- batch_norm ------------------------------------------------------------------------------

// batch_norm in training on a narrow x with parameters and running statistics of `params` (float32:
// PyTorch's mixed batch norm, or x's dtype), against float64.
void check_batch_norm(DType t, DType params, bool training) {
  const std::string what = std::string("batch_norm ") + dtype_name(t) + " input, " + dtype_name(params) +
                           " parameters" + (training ? ", training" : ", eval");
  const TensorOptions o(t), po(params);
  const int64_t N = 4, C = 5, S = 36;
  const Tensor x = leaf(randn({N, C, 6, 6}, o) * 2 + 1);
  const Tensor w = leaf(rand({C}, po) + 0.5), b = leaf(randn({C}, po));
  const Tensor rm = randn({C}, po), rv = rand({C}, po) + 0.5;
  const Tensor RM = f64(rm), RV = f64(rv);
  const Tensor y = batch_norm(x, w, b, rm, rv, training, 0.1, 1e-5);
  const Tensor g = randn(y.sizes(), o);
  y.backward(g);
  EXPECT_EQ(w.grad().dtype(), params) << what;
  EXPECT_EQ(b.grad().dtype(), params) << what;

  const Tensor X = leaf(f64(x)), W = leaf(f64(w)), B = leaf(f64(b));
  const Tensor Y = batch_norm(X, W, B, RM, RV, training, 0.1, 1e-5);
  Y.backward(f64(g));
  // Magnitudes: |xhat| |w| + |b| for y; for the gradients, the terms of their formulas.
  std::vector<int64_t> r{0, 2, 3};
  const Tensor mean = training ? X.detach().mean(r, true) : f64(rm).view({1, C, 1, 1});
  const Tensor var = training ? (X.detach() - mean).pow(2).mean(r, true) : f64(rv).view({1, C, 1, 1});
  const Tensor istd = (var + 1e-5).rsqrt(), xhat = (X.detach() - mean) * istd;
  const Tensor Wv = f64(w).abs().view({1, C, 1, 1}), G = f64(g).abs();
  const double M = static_cast<double>(N * S);
  EXPECT_TRUE(within_bound(what + " forward", y, t, Y, xhat.abs() * Wv + f64(b).abs().view({1, C, 1, 1}), 16));
  const Tensor dx_mag = training ? istd * Wv * (G + G.mean(r, true) + xhat.abs() * (G * xhat.abs()).mean(r, true))
                                 : istd * Wv * G;
  EXPECT_TRUE(within_bound(what + " dx", x.grad(), t, X.grad(), dx_mag, M));
  EXPECT_TRUE(within_bound(what + " dweight", w.grad(), params, W.grad(), (G * xhat.abs()).sum(r), M));
  EXPECT_TRUE(within_bound(what + " dbias", b.grad(), params, B.grad(), G.sum(r), M));
  if (training) {  // running statistics updated in their own dtype
    EXPECT_EQ(rm.dtype(), params);
    EXPECT_TRUE(within_bound(what + " running_mean", rm, params, RM, RM.abs() + mean.abs().view({C}), M));
    EXPECT_TRUE(within_bound(what + " running_var", rv, params, RV, RV.abs() + var.view({C}) * 2, M));
  }
}

TEST(Bf16Kernels, BatchNormMixedAndNarrow) {
  for (bool training : {true, false}) {
    check_batch_norm(kBFloat16, kFloat32, training);
    check_batch_norm(kBFloat16, kBFloat16, training);
    check_batch_norm(kHalf, kFloat32, training);
    check_batch_norm(kHalf, kHalf, training);
  }
}

TEST(Bf16Kernels, BatchNormDTypeErrors) {
  const Tensor x = randn({2, 3, 4}, TensorOptions(kBFloat16));
  EXPECT_THAT(error_of([&] { batch_norm(x, randn({3}, TensorOptions(kFloat64)), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5); }),
              AllOf(HasSubstr("batch_norm"), HasSubstr("bfloat16"), HasSubstr("float64")));
  EXPECT_THAT(error_of([&] { batch_norm(x, ones({3}), ones({3}, TensorOptions(kBFloat16)), Tensor(), Tensor(), true, 0.1, 1e-5); }),
              AllOf(HasSubstr("batch_norm"), HasSubstr("share one dtype"), HasSubstr("bfloat16"), HasSubstr("float32")));
  // A float32 input keeps requiring float32 parameters.
  EXPECT_THAT(error_of([&] { batch_norm(randn({2, 3}), ones({3}, TensorOptions(kBFloat16)), Tensor(), Tensor(), Tensor(), true, 0.1, 1e-5); }),
              AllOf(HasSubstr("batch_norm"), HasSubstr("float32"), HasSubstr("bfloat16")));
}

// --- nll_loss and cross_entropy ----------------------------------------------------------------

TEST(Bf16Kernels, NllLossAndCrossEntropy) {
  for (DType t : {kBFloat16, kHalf}) {
    const std::string in = std::string(" in ") + dtype_name(t);
    const Tensor target = tensor(std::vector<int64_t>{0, 4, 2, 2, 1, 3, 4, -100});
    const Tensor cw = rand({5}, TensorOptions(t)) + 0.5;
    const Tensor x = leaf(randn({8, 5}, TensorOptions(t)));
    const Tensor X = leaf(f64(x));
    for (Reduction red : {kMean, kSum, kNone}) {
      x.mutable_grad() = Tensor();
      X.mutable_grad() = Tensor();
      const Tensor l = nll_loss(x, target, cw, red), L = nll_loss(X, target, f64(cw), red);
      const Tensor g = red == kNone ? randn({8}, TensorOptions(t)) : ones({}, TensorOptions(t));
      l.backward(g);
      L.backward(f64(g));
      const Tensor la = nll_loss(leaf(f64(x).abs()), target, f64(cw), red).abs();
      EXPECT_TRUE(within_bound("nll_loss" + in, l, t, L, la, 8));
      EXPECT_TRUE(within_bound("nll_loss dx" + in, x.grad(), t, X.grad(), X.grad().abs(), 1));
    }
    x.mutable_grad() = Tensor();
    X.mutable_grad() = Tensor();
    // cross_entropy is composed of narrow ops (log_softmax, the class sum for the smoothing, the
    // mean, the scales by 1 - eps and eps / C, their sum): fewer than 8 roundings, each at most u
    // of a value no larger than sum |log p| / 7 (7 samples counted).
    const Tensor l = cross_entropy_loss(x, target, Tensor(), kMean, -100, 0.1);
    const Tensor L = cross_entropy_loss(X, target, Tensor(), kMean, -100, 0.1);
    l.backward();
    L.backward();
    const Tensor logp = f64(x).log_softmax(1).abs();
    EXPECT_TRUE(within_bound("cross_entropy" + in, l, t, L, logp.sum() * (8 * unit_roundoff(t) * std::ldexp(1.0, 24) / 7), 1));
    EXPECT_EQ(x.grad().dtype(), t);
    EXPECT_LT(max_abs_diff(x.grad(), X.grad()), 4 * unit_roundoff(t));  // softmax - onehot, over 7 samples
  }
}

// --- a whole CNN ---------------------------------------------------------------------------

// What autocast hands the kernels: a small CNN's forward and backward with bfloat16 activations,
// convolution and linear weights, and a float32 batch norm; every gradient in its tensor's dtype,
// and near the float64 run on the same values in relative 2-norm. Not a bound, and the draw is
// seeded (its errors are 0.3-0.6%): a gradient summed over many signed terms (a bias's, the batch
// norm's) cancels, and the bfloat16 roundings of its terms then weigh more - over 60 unseeded draws
// 8% of the gradients were off by more than 5% (at most 23%). A max pool is left out for the same
// reason: bfloat16 activations tie often within a window, and a tie moves the window's gradient.
TEST(Bf16Kernels, SmallCnnForwardAndBackward) {
  manual_seed(1);
  const TensorOptions b16(kBFloat16);
  const Tensor x = randn({4, 3, 16, 16}, b16), target = tensor(std::vector<int64_t>{1, 0, 3, 2});
  std::vector<Tensor> params = {randn({8, 3, 3, 3}, b16) * 0.3, randn({16}, b16) * 0.1, rand({8}) + 0.5,
                                randn({8}) * 0.1, randn({16, 8, 3, 3}, b16) * 0.2, randn({4, 16}, b16) * 0.3,
                                randn({4}, b16) * 0.1};
  for (Tensor& p : params) p = leaf(p);
  auto net = [&](const Tensor& in, const std::vector<Tensor>& w, const Tensor& rm, const Tensor& rv) {
    Tensor h = conv2d(in, w[0], Tensor(), 1, 1);  // no bias before the batch norm: its gradient is 0
    h = relu(batch_norm(h, w[2], w[3], rm, rv, true, 0.1, 1e-5));
    h = avg_pool2d(h, 2);
    h = relu(conv2d(h, w[4], w[1], 2, 1));
    h = adaptive_avg_pool2d(h, {1, 1}).flatten(1);
    return cross_entropy_loss(linear(h, w[5], w[6]), target);
  };
  const Tensor loss = net(x, params, zeros({8}), ones({8}));
  EXPECT_EQ(loss.dtype(), kBFloat16);
  loss.backward();
  std::vector<Tensor> wide;
  for (const Tensor& p : params) wide.push_back(leaf(f64(p)));
  const Tensor want = net(f64(x), wide, zeros({8}, TensorOptions(kFloat64)), ones({8}, TensorOptions(kFloat64)));
  want.backward();
  EXPECT_NEAR(loss.item<double>(), want.item<double>(), 0.02 * (1 + std::abs(want.item<double>())));
  for (size_t i = 0; i < params.size(); ++i) {
    ASSERT_TRUE(params[i].grad().defined()) << i;
    EXPECT_EQ(params[i].grad().dtype(), params[i].dtype()) << i;
    const Tensor diff = f64(params[i].grad()) - wide[i].grad();
    const double rel = diff.norm().item<double>() / wide[i].grad().norm().item<double>();
    EXPECT_LT(rel, 0.05) << "parameter " << i;
  }
}

// --- PyTorch 1.13 --------------------------------------------------------------------------

Tensor from_bits(const nlohmann::json& bits, const Shape& shape) {
  const auto v = bits.get<std::vector<uint16_t>>();
  Tensor t = empty(shape, TensorOptions(kBFloat16));
  EXPECT_EQ(static_cast<size_t>(t.numel()), v.size());
  std::memcpy(t.data_ptr(), v.data(), v.size() * 2);
  return t;
}

// Within one bfloat16 unit in the last place of PyTorch's value (plus float32 sum slack): the
// accumulation order of two oneDNN builds may differ, and a sum on either side of a rounding
// boundary then rounds one unit apart.
::testing::AssertionResult within_ulp(const std::string& what, const Tensor& got, const Tensor& want) {
  const Tensor g = f64(got).contiguous(), w = f64(want).contiguous();
  if (g.sizes() != w.sizes()) return ::testing::AssertionFailure() << what << ": shape " << g.sizes() << " vs " << w.sizes();
  const double* gp = g.data_ptr<double>();
  const double* wp = w.data_ptr<double>();
  for (int64_t e = 0; e < g.numel(); ++e) {
    const double ulp = std::ldexp(1.0, std::ilogb(std::max(std::abs(wp[e]), 1e-30)) - 7);
    if (std::abs(gp[e] - wp[e]) > ulp * 1.01 + 1e-6)
      return ::testing::AssertionFailure() << what << " element " << e << ": PyTorch " << wp[e] << ", cohort " << gp[e];
  }
  return ::testing::AssertionSuccess();
}

TEST(Bf16Kernels, Conv2dMatchesPyTorch) {
  for (const auto& c : load_fixture("reduced_kernels.json").at("conv2d")) {
    const Shape xs = c.at("x_shape").get<Shape>(), ws = c.at("w_shape").get<Shape>(), ys = c.at("y_shape").get<Shape>();
    const Tensor x = leaf(from_bits(c.at("x"), xs)), w = leaf(from_bits(c.at("w"), ws));
    const Tensor b = c.contains("b") ? leaf(from_bits(c.at("b"), {ws[0]})) : Tensor();
    const int64_t stride = c.at("stride"), padding = c.at("padding"), groups = c.at("groups");
    const Tensor y = conv2d(x, w, b, stride, padding, 1, groups);
    y.backward(from_bits(c.at("gy"), ys));
    const std::string what = "conv2d " + std::to_string(groups) + " groups";
    EXPECT_TRUE(within_ulp(what + " forward", y, from_bits(c.at("y"), ys)));
    EXPECT_TRUE(within_ulp(what + " dx", x.grad(), from_bits(c.at("gx"), xs)));
    EXPECT_TRUE(within_ulp(what + " dw", w.grad(), from_bits(c.at("gw"), ws)));
    if (b.defined()) EXPECT_TRUE(within_ulp(what + " db", b.grad(), from_bits(c.at("gb"), {ws[0]})));
  }
}

TEST(Bf16Kernels, MixedBatchNormMatchesPyTorch) {
  const auto& c = load_fixture("reduced_kernels.json").at("batch_norm");
  const Shape xs = c.at("x_shape").get<Shape>();
  const Tensor x = leaf(from_bits(c.at("x"), xs));
  const Tensor w = leaf(tensor(c.at("weight").get<std::vector<float>>())), b = leaf(tensor(c.at("bias").get<std::vector<float>>()));
  const Tensor rm = tensor(c.at("running_mean").get<std::vector<float>>()), rv = tensor(c.at("running_var").get<std::vector<float>>());
  const Tensor y = batch_norm(x, w, b, rm, rv, true, c.at("momentum"), c.at("eps"));
  EXPECT_EQ(y.dtype(), kBFloat16);
  y.backward(from_bits(c.at("gy"), xs));
  EXPECT_TRUE(within_ulp("batch_norm forward", y, from_bits(c.at("y"), xs)));
  EXPECT_TRUE(within_ulp("batch_norm dx", x.grad(), from_bits(c.at("gx"), xs)));
  auto close = [](const char* what, const Tensor& got, const nlohmann::json& want) {
    const auto v = want.get<std::vector<double>>();
    ASSERT_EQ(got.dtype(), kFloat32) << what;
    for (size_t i = 0; i < v.size(); ++i)
      EXPECT_NEAR(got[static_cast<int64_t>(i)].item<double>(), v[i], 1e-5 * (1 + std::abs(v[i]))) << what << " " << i;
  };
  close("running_mean", rm, c.at("running_mean_after"));
  close("running_var", rv, c.at("running_var_after"));
  close("dweight", w.grad(), c.at("gweight"));
  close("dbias", b.grad(), c.at("gbias"));
}

}  // namespace
}  // namespace cohort::testing
