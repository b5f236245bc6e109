// The bfloat16 and float16 kernels that skip whole-tensor float32 copies (Note [Narrow batch norm]
// in src/ops/cpu/batch_norm.cpp, Note [Narrow elementwise blocks] in src/ops/cpu/elementwise.cpp)
// promise the widened path's results bit for bit: the float32 computation on the widened inputs,
// rounded once. These tests hold them to that, on shapes that exercise partial vectors, partial
// blocks and several threads' shares, with NaN, infinities, signed zeros and subnormals among the
// values.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/normalization.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/shape.h"

namespace cohort::testing {
namespace {

// Whether a and b (of one narrow dtype and shape) hold the same bits, NaN included.
::testing::AssertionResult same_bits(const std::string& what, const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype() || got.sizes() != want.sizes())
    return ::testing::AssertionFailure() << what << ": got " << got.dtype() << " " << got.sizes() << ", expected "
                                         << want.dtype() << " " << want.sizes();
  const Tensor g = got.detach().contiguous(), w = want.detach().contiguous();
  const auto* gp = static_cast<const uint16_t*>(g.data_ptr());
  const auto* wp = static_cast<const uint16_t*>(w.data_ptr());
  for (int64_t i = 0; i < g.numel(); ++i)
    if (gp[i] != wp[i])
      return ::testing::AssertionFailure() << what << " element " << i << ": bits 0x" << std::hex << gp[i]
                                           << ", expected 0x" << wp[i];
  return ::testing::AssertionSuccess();
}

// float32 tensors compared exactly (NaN equal to NaN).
::testing::AssertionResult same_floats(const std::string& what, const Tensor& got, const Tensor& want) {
  if (got.dtype() != kFloat32 || want.dtype() != kFloat32 || got.sizes() != want.sizes())
    return ::testing::AssertionFailure() << what << ": got " << got.dtype() << " " << got.sizes() << ", expected "
                                         << want.dtype() << " " << want.sizes();
  const Tensor g = got.detach().contiguous(), w = want.detach().contiguous();
  const float *gp = g.data_ptr<float>(), *wp = w.data_ptr<float>();
  for (int64_t i = 0; i < g.numel(); ++i)
    if (!(gp[i] == wp[i] || (std::isnan(gp[i]) && std::isnan(wp[i]))))
      return ::testing::AssertionFailure() << what << " element " << i << ": " << gp[i] << ", expected " << wp[i];
  return ::testing::AssertionSuccess();
}

// randn in dtype t, with special values sprinkled in when `specials`.
Tensor narrow_values(const Shape& sizes, DType t, bool specials) {
  Tensor x = (randn(sizes) * 3).to(t);
  if (!specials || x.numel() < 16) return x;
  const float inf = std::numeric_limits<float>::infinity();
  const float values[] = {std::nanf(""), inf, -inf, 0.0f, -0.0f, 1e-40f, -1e-40f, 65504.0f};
  Tensor flat = x.view({-1});
  int64_t k = 0;
  for (float v : values) flat.select(0, (k * 7919 + 3) % x.numel()).fill_(v), ++k;
  return x;
}

Tensor widened(const Tensor& t) { return t.to(kFloat32); }

TEST(NarrowKernels, ElementwiseMatchTheWidenedComputation) {
  NoGradGuard no_grad;
  for (DType t : {kBFloat16, kHalf}) {
    // 70001: several threads' shares of kParallelGrain, blocks of 1024 and a ragged tail; 5: one partial vector.
    for (int64_t n : {int64_t{5}, int64_t{1029}, int64_t{70001}}) {
      const std::string in = std::string(" ") + dtype_name(t) + " n=" + std::to_string(n);
      const Tensor a = narrow_values({n}, t, true), b = narrow_values({n}, t, false);
      EXPECT_TRUE(same_bits("relu" + in, relu(a), relu(widened(a)).to(t)));
      EXPECT_TRUE(same_bits("add" + in, a + b, (widened(a) + widened(b)).to(t)));
      EXPECT_TRUE(same_bits("mul" + in, a * b, (widened(a) * widened(b)).to(t)));
      EXPECT_TRUE(same_bits("sub (widened path)" + in, a - b, (widened(a) - widened(b)).to(t)));
      EXPECT_TRUE(same_bits("threshold_backward" + in, threshold_backward(b, a, 0),
                            threshold_backward(widened(b), widened(a), 0).to(t)));
      EXPECT_TRUE(same_bits("threshold_backward 0.5" + in, threshold_backward(b, a, 0.5),
                            threshold_backward(widened(b), widened(a), 0.5).to(t)));
      Tensor c = a.clone();
      c.relu_();
      EXPECT_TRUE(same_bits("relu_" + in, c, relu(widened(a)).to(t)));
      Tensor d = a.clone();
      d.add_(b);
      EXPECT_TRUE(same_bits("add_" + in, d, (widened(a) + widened(b)).to(t)));
    }
    // Operands the block loop does not take: a view with strides, a broadcast, alpha.
    const Tensor m = narrow_values({33, 70}, t, true), r = narrow_values({70}, t, false);
    const std::string in = std::string(" ") + dtype_name(t);
    EXPECT_TRUE(same_bits("relu of a transposed view" + in, relu(m.t()), relu(widened(m).t()).to(t)));
    EXPECT_TRUE(same_bits("broadcast add" + in, m + r, (widened(m) + widened(r)).to(t)));
    EXPECT_TRUE(same_bits("add with alpha" + in, add(m, m, 2.5), add(widened(m), widened(m), 2.5).to(t)));
  }
}

// batch_norm with float32 parameters on a narrow x against the same op on x widened: the outputs,
// the gradients and the running statistics bit for bit.
void check_batch_norm_bits(DType t, const Shape& sizes, bool training, bool affine) {
  const std::string what = std::string("batch_norm ") + dtype_name(t) + " " + std::to_string(sizes[0]) + "x" +
                           std::to_string(sizes[1]) + (sizes.size() > 2 ? "x..." : "") +
                           (training ? " training" : " eval") + (affine ? " affine" : "");
  const int64_t C = sizes[1];
  const Tensor x = (narrow_values(sizes, t, false) + 1).detach().requires_grad_(true);
  const Tensor w = affine ? (rand({C}) + 0.5).requires_grad_(true) : Tensor();
  const Tensor b = affine ? randn({C}).requires_grad_(true) : Tensor();
  const Tensor rm = randn({C}), rv = rand({C}) + 0.5;
  const Tensor RM = rm.clone(), RV = rv.clone();
  const Tensor X = widened(x).detach().requires_grad_(true);
  const Tensor W = affine ? w.detach().clone().requires_grad_(true) : Tensor();
  const Tensor B = affine ? b.detach().clone().requires_grad_(true) : Tensor();

  const Tensor y = batch_norm(x, w, b, rm, rv, training, 0.1, 1e-5);
  const Tensor Y = batch_norm(X, W, B, RM, RV, training, 0.1, 1e-5);
  EXPECT_TRUE(same_bits(what + " forward", y, Y.detach().to(t)));
  EXPECT_TRUE(same_floats(what + " running_mean", rm, RM));
  EXPECT_TRUE(same_floats(what + " running_var", rv, RV));
  const Tensor g = narrow_values(y.sizes(), t, false);
  y.backward(g);
  Y.backward(widened(g));
  EXPECT_TRUE(same_bits(what + " dx", x.grad(), X.grad().to(t)));
  if (affine) {
    EXPECT_TRUE(same_floats(what + " dweight", w.grad(), W.grad()));
    EXPECT_TRUE(same_floats(what + " dbias", b.grad(), B.grad()));
  }
}

TEST(NarrowKernels, BatchNormMatchesTheWidenedComputation) {
  for (DType t : {kBFloat16, kHalf})
    for (bool training : {true, false}) {
      check_batch_norm_bits(t, {32, 8, 16, 16}, training, true);  // several rows of whole vectors per channel
      check_batch_norm_bits(t, {3, 5, 7, 5}, training, true);     // rows of 35: partial vectors
      check_batch_norm_bits(t, {40, 6}, training, false);         // [N, C]: rows of one element
      check_batch_norm_bits(t, {2, 3, 4, 3, 5}, training, true);  // 3-d
    }
}

TEST(NarrowKernels, BatchNormOnAStridedInput) {
  // A channels-last view has planes that are not one stride-1 run: the widened path runs it, with
  // the same bits.
  NoGradGuard no_grad;
  const Tensor x = narrow_values({4, 6, 5, 3}, kBFloat16, false).permute({0, 3, 1, 2});  // [4, 3, 6, 5]
  const Tensor w = rand({3}) + 0.5, b = randn({3});
  const Tensor y = batch_norm(x, w, b, Tensor(), Tensor(), true, 0.1, 1e-5);
  const Tensor Y = batch_norm(widened(x), w, b, Tensor(), Tensor(), true, 0.1, 1e-5);
  EXPECT_TRUE(same_bits("batch_norm of a permuted bfloat16 view", y, Y.to(kBFloat16)));
}

}  // namespace
}  // namespace cohort::testing
