// conv2d's kernels and algorithms: oneDNN against the plain reference loops on random geometries,
// Winograd against direct convolution and when Auto picks it, the backward for a subset of the inputs,
// and float32 double backward. Values, strided inputs and gradients (first and second order) of the
// op itself are in the op table (tests/ops/op_table_nn_test.cpp).
#include <gtest/gtest.h>

#include <random>
#include <sstream>

#include "cohort/autograd/engine.h"
#include "cohort/autograd/node.h"
#include "cohort/core/generator.h"
#include "cohort/ops/backend.h"
#include "cohort/ops/convolution.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "ops/cpu/conv_kernels.h"
#include "support/pytorch_fixture.h"
#include "support/gradcheck.h"

namespace cohort {
namespace {

std::string describe(const Tensor& x, const Tensor& w, const kernel::Conv2dParams& p) {
  std::ostringstream os;
  os << "input " << x.sizes() << " weight " << w.sizes() << " stride " << IntArrayRef(p.stride.data(), 2)
     << " pad_lo " << IntArrayRef(p.pad_lo.data(), 2) << " pad_hi " << IntArrayRef(p.pad_hi.data(), 2)
     << " dilation " << IntArrayRef(p.dilation.data(), 2) << " groups " << p.groups
     << (x.is_contiguous() ? "" : " (non-contiguous input)");
  return os.str();
}

// ---- oneDNN against the plain loops ---------------------------------------------------------

TEST(ConvKernels, DnnlMatchesReferenceOnRandomShapes) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  manual_seed(3);
  for (int trial = 0; trial < 60; ++trial) {
    kernel::Conv2dParams p;
    p.groups = pick(1, 3);
    const int64_t N = trial % 3 == 0 ? 1 : pick(2, 3), Cg = pick(1, 3), Og = pick(1, 3);
    const int64_t KH = pick(1, 4), KW = pick(1, 4);
    for (int d = 0; d < 2; ++d) {
      p.stride[d] = pick(1, 3), p.dilation[d] = pick(1, 2), p.pad_lo[d] = pick(0, 2), p.pad_hi[d] = pick(0, 2);
    }
    if (trial % 4 == 1) {  // "same" with even kernels: one more padding at the end
      p.stride = {1, 1};
      for (int d = 0; d < 2; ++d) {
        const int64_t total = p.dilation[d] * ((d ? KW : KH) - 1);
        p.pad_lo[d] = total / 2, p.pad_hi[d] = total - total / 2;
      }
    }
    const int64_t H = p.dilation[0] * (KH - 1) + 1 + pick(0, 6), W = p.dilation[1] * (KW - 1) + 1 + pick(0, 6);
    const int64_t P = (H + p.pad_lo[0] + p.pad_hi[0] - p.dilation[0] * (KH - 1) - 1) / p.stride[0] + 1;
    const int64_t Q = (W + p.pad_lo[1] + p.pad_hi[1] - p.dilation[1] * (KW - 1) - 1) / p.stride[1] + 1;
    Tensor x = randn({N, Cg * p.groups, H, W});
    if (trial % 3 == 2) x = testing::make_noncontiguous(x);
    Tensor w = randn({Og * p.groups, Cg, KH, KW}), b = randn({Og * p.groups}), dy = randn({N, Og * p.groups, P, Q});
    if (trial % 5 == 3) dy = testing::make_noncontiguous(dy);
    const bool with_bias = trial % 2 == 0;
    SCOPED_TRACE(describe(x, w, p));

    Tensor y_fast = empty({N, Og * p.groups, P, Q}), y_ref = empty({N, Og * p.groups, P, Q});
    kernel::conv2d_forward(y_fast, x, w, with_bias ? b : Tensor(), p);
    kernel::conv2d_forward_reference(y_ref, x, w, with_bias ? b : Tensor(), p);
    EXPECT_LT(testing::max_abs_diff(y_fast, y_ref), 1e-4) << "forward";

    // Both gradients in one call (diff_dst reordered once for both), then each alone: the same bits.
    Tensor dx_fast = empty(x.sizes()), dx_ref = empty(x.sizes());
    Tensor dw_fast = empty(w.sizes()), dw_ref = empty(w.sizes());
    Tensor db_fast = with_bias ? empty({w.size(0)}) : Tensor(), db_ref = with_bias ? empty({w.size(0)}) : Tensor();
    kernel::conv2d_backward(dx_fast, dw_fast, db_fast, dy, x, w, p);
    Tensor dx_alone = empty(x.sizes()), dw_alone = empty(w.sizes());
    kernel::conv2d_backward(dx_alone, Tensor(), Tensor(), dy, Tensor(), w, p);
    kernel::conv2d_backward(Tensor(), dw_alone, Tensor(), dy, x, Tensor(), p);
    EXPECT_TRUE(equal(dx_fast, dx_alone));
    EXPECT_TRUE(equal(dw_fast, dw_alone));
    kernel::conv2d_backward_data_reference(dx_ref, dy, w, p);
    EXPECT_LT(testing::max_abs_diff(dx_fast, dx_ref), 1e-4) << "backward data";
    kernel::conv2d_backward_weights_reference(dw_ref, db_ref, x, dy, p);
    EXPECT_LT(testing::max_abs_diff(dw_fast, dw_ref), 1e-3) << "backward weights";
    if (with_bias) {
      EXPECT_LT(testing::max_abs_diff(db_fast, db_ref), 1e-3) << "backward bias";
    }
  }
}

// Restores the process-wide conv algorithm when a test ends.
struct ConvAlgorithmScope {
  ConvAlgorithm saved = conv_algorithm();
  explicit ConvAlgorithmScope(ConvAlgorithm a) { set_conv_algorithm(a); }
  ~ConvAlgorithmScope() { set_conv_algorithm(saved); }
};

// Output, input gradient and weight gradient of one conv2d (padding 1), in float64.
std::vector<Tensor> conv_and_grads(const Tensor& x, const Tensor& w, DType dtype) {
  Tensor xd = x.to(dtype).clone().requires_grad_(true), wd = w.to(dtype).clone().requires_grad_(true);
  Tensor y = conv2d(xd, wd, {}, 1, 1);
  (y * y).sum().backward();  // a gradient that differs per element
  return {y.detach().to(kFloat64), xd.grad().to(kFloat64), wd.grad().to(kFloat64)};
}

TEST(ConvAlgorithm, WinogradAndDirectBothMatchFloat64) {
  manual_seed(5);
  // 3x3, stride 1, 64 channels, 2 x 4 x 4 = 32 tiles of 4x4: Auto picks Winograd.
  Tensor x = randn({2, 64, 16, 16}), w = randn({64, 64, 3, 3}) / 24.0;
  const std::vector<Tensor> exact = conv_and_grads(x, w, kFloat64);
  std::vector<Tensor> got[3];
  const ConvAlgorithm algorithms[3] = {ConvAlgorithm::Direct, ConvAlgorithm::Winograd, ConvAlgorithm::Auto};
  const char* names[3] = {"output", "input gradient", "weight gradient"};
  for (int a = 0; a < 3; ++a) {
    ConvAlgorithmScope scope(algorithms[a]);
    got[a] = conv_and_grads(x, w, kFloat32);
    for (int k = 0; k < 3; ++k) {
      const double scale = exact[k].abs().max().item<double>();
      EXPECT_LT(testing::max_abs_diff(got[a][k], exact[k]) / scale, 2e-5) << names[k] << ", algorithm " << a;
    }
  }
  // Winograd really ran (its rounding differs from direct's), and Auto chose it here.
  for (int k = 0; k < 3; ++k) {
    EXPECT_FALSE(equal(got[0][k], got[1][k])) << names[k];
    EXPECT_TRUE(equal(got[1][k], got[2][k])) << names[k];
  }
}

TEST(ConvAlgorithm, WinogradIsOneDnnsWhereItRunsAvx512AndOursElsewhere) {
  // oneDNN 2.6's Winograd kernels are AVX-512 ones: `cohort info` says whose kernels run.
  const BackendInfo info = backend_info();
  EXPECT_EQ(info.winograd, winograd_implementation());
  const bool avx512 = info.cpu_isa.rfind("avx512", 0) == 0;
  EXPECT_EQ(winograd_implementation(), avx512 ? "oneDNN" : "cohort") << "oneDNN's ISA: " << info.cpu_isa;
}

TEST(ConvAlgorithm, AutoStaysDirectWhereWinogradDoesNotPay) {
  manual_seed(6);
  struct Case {
    const char* why;
    Tensor x, w;
    int64_t stride, padding, groups;
  };
  std::vector<Case> cases = {
      {"8 tiles", randn({2, 64, 8, 8}), randn({64, 64, 3, 3}), 1, 1, 1},
      {"stride 2", randn({8, 16, 32, 32}), randn({16, 16, 3, 3}), 2, 1, 1},
      {"groups", randn({8, 16, 32, 32}), randn({16, 8, 3, 3}), 1, 1, 2},
      {"5x5", randn({8, 16, 32, 32}), randn({16, 16, 5, 5}), 1, 2, 1},
  };
  // cohort's own Winograd also wants channels and whole tiles (Note [Winograd convolution]).
  if (winograd_implementation() == "cohort") {
    cases.push_back({"32 channels", randn({8, 32, 32, 32}), randn({32, 32, 3, 3}), 1, 1, 1});
    cases.push_back({"14x14", randn({8, 64, 14, 14}), randn({64, 64, 3, 3}), 1, 1, 1});
  }
  for (const Case& c : cases) {
    Tensor direct, automatic;
    {
      ConvAlgorithmScope scope(ConvAlgorithm::Direct);
      direct = conv2d(c.x, c.w, {}, c.stride, c.padding, 1, c.groups);
    }
    {
      ConvAlgorithmScope scope(ConvAlgorithm::Auto);
      automatic = conv2d(c.x, c.w, {}, c.stride, c.padding, 1, c.groups);
    }
    EXPECT_TRUE(equal(direct, automatic)) << c.why;
  }
}

// The op table differentiates w.r.t. every input; the backward also runs for a subset.
TEST(ConvBackward, OnlyBiasOrOnlyInputRequiresGrad) {
  manual_seed(7);
  Tensor x = randn({2, 3, 5, 5}), w = randn({4, 3, 3, 3}), b = randn({4});
  b.requires_grad_();
  conv2d(x, w, b).sum().backward();
  EXPECT_LT(testing::max_abs_diff(b.grad(), full({4}, 18.0)), 1e-4);  // 2 images x 3 x 3 outputs
  x.requires_grad_();
  Tensor y = conv2d(x, w, {}, 1, 1);
  EXPECT_EQ(y.grad_fn()->name(), "ConvolutionBackward0");
  y.sum().backward();
  EXPECT_EQ(x.grad().sizes(), x.sizes());
  EXPECT_FALSE(w.grad().defined());
}

// Double backward on float32 runs the oneDNN (or Winograd) kernels in the double-backward nodes:
// second derivatives of |conv(x, w)|^2 along (u, v) agree with float64's plain loops.
std::vector<Tensor> conv_second_derivatives(const Tensor& x, const Tensor& w, const Tensor& u, const Tensor& v,
                                            DType dtype) {
  Tensor xd = x.to(dtype).requires_grad_(true), wd = w.to(dtype).requires_grad_(true);
  Tensor y = conv2d(xd, wd, {}, 1, 1);
  std::vector<Tensor> g = autograd::grad({(y * y).sum()}, {xd, wd}, {}, std::nullopt, /*create_graph=*/true);
  std::vector<Tensor> h = autograd::grad({(g[0] * u.to(dtype)).sum() + (g[1] * v.to(dtype)).sum()}, {xd, wd});
  return {h[0].to(kFloat64), h[1].to(kFloat64)};
}

TEST(ConvBackward, DoubleBackwardFloat32MatchesFloat64WithEveryAlgorithm) {
  manual_seed(8);
  Tensor x = randn({1, 32, 12, 12}), w = randn({32, 32, 3, 3}) / 16.0;
  Tensor u = randn(x.sizes()), v = randn(w.sizes());
  const std::vector<Tensor> exact = conv_second_derivatives(x, w, u, v, kFloat64);
  std::vector<Tensor> got[2];
  const ConvAlgorithm algorithms[2] = {ConvAlgorithm::Direct, ConvAlgorithm::Winograd};
  for (int a = 0; a < 2; ++a) {
    ConvAlgorithmScope scope(algorithms[a]);
    got[a] = conv_second_derivatives(x, w, u, v, kFloat32);
    for (int k = 0; k < 2; ++k)
      EXPECT_LT(testing::max_abs_diff(got[a][k], exact[k]) / exact[k].abs().max().item<double>(), 2e-5)
          << (k ? "d/dw" : "d/dx") << ", algorithm " << a;
  }
  EXPECT_FALSE(equal(got[0][0], got[1][0]));  // Winograd ran (its rounding differs)
}

}  // namespace
}  // namespace cohort
