// The vectorised fast paths (src/ops/cpu/vector_loops.cpp) against what they replace: ReLU's fused
// backward against where(y > 0, g, 0), where's contiguous and broadcast-value paths against its
// strided loop, and batch norm's contiguous-plane path against its strided path and a float64
// reference, at sizes that reach the vector bodies, their tails and several threads.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "cohort/autograd/engine.h"
#include "cohort/core/generator.h"
#include "cohort/core/threads.h"
#include "cohort/nn/functional/batchnorm.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"

namespace cohort {
namespace {

namespace F = nn::functional;

// Bitwise equality, NaN equal to NaN (element-wise, so that the failure names the element).
::testing::AssertionResult same_bits(const Tensor& got, const Tensor& expected) {
  if (got.sizes() != expected.sizes() || got.dtype() != expected.dtype())
    return ::testing::AssertionFailure() << "shape/dtype " << got.sizes() << " " << got.dtype() << ", expected "
                                         << expected.sizes() << " " << expected.dtype();
  Tensor a = got.contiguous().to(kFloat64).reshape({-1}), b = expected.contiguous().to(kFloat64).reshape({-1});
  const double* pa = a.data_ptr<double>();
  const double* pb = b.data_ptr<double>();
  for (int64_t i = 0; i < a.numel(); ++i) {
    const bool both_nan = std::isnan(pa[i]) && std::isnan(pb[i]);
    if (!both_nan && (pa[i] != pb[i] || std::signbit(pa[i]) != std::signbit(pb[i])))
      return ::testing::AssertionFailure() << "element " << i << ": expected " << pb[i] << ", got " << pa[i];
  }
  return ::testing::AssertionSuccess();
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  return (a.to(kFloat64) - b.to(kFloat64)).abs().max().item<double>();
}

// Values with exact zeros, negative zeros, NaN and infinities sprinkled in.
Tensor awkward(Shape shape, DType dtype) {
  Tensor t = randn(shape, kFloat64);
  Tensor flat = t.view({-1});
  const double specials[] = {0.0, -0.0, std::numeric_limits<double>::quiet_NaN(),
                             std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  for (int64_t i = 0; i < flat.numel(); i += 7) flat[i].fill_(specials[(i / 7) % 5]);
  return t.to(dtype);
}

const Shape kSizes[] = {{37}, {3, 129}, {1000003}};  // tails only, body and tail, several threads

TEST(OpFastPath, ThresholdBackwardEqualsTheWhereComposite) {
  manual_seed(1);
  for (DType dtype : {kFloat32, kFloat64})
    for (const Shape& shape : kSizes) {
      SCOPED_TRACE(::testing::Message() << dtype << " " << IntArrayRef(shape));
      Tensor g = awkward(shape, dtype), y = relu(awkward(shape, dtype));
      EXPECT_TRUE(same_bits(threshold_backward(g, y, 0), where(y <= 0, zeros_like(g), g)));
      EXPECT_TRUE(same_bits(threshold_backward(g, y, 0.5), where(y <= 0.5, zeros_like(g), g)));
      Tensor g1 = full({}, 0.75, dtype).expand(shape);  // x.relu().sum()'s backward
      EXPECT_TRUE(same_bits(threshold_backward(g1, y, 0), where(y <= 0, zeros_like(g1), g1)));
      // Strided operands take the scalar loop, with the same meaning.
      if (shape.size() == 2) {
        Tensor gt = g.t(), yt = y.t();
        EXPECT_TRUE(same_bits(threshold_backward(gt, yt, 0), where(yt <= 0, zeros_like(gt), gt)));
      }
    }
  // Broadcasting, as PyTorch's threshold_backward allows it.
  Tensor g = randn({4, 5}), y = randn({5});
  EXPECT_TRUE(same_bits(threshold_backward(g, y, 0), where(y <= 0, zeros_like(g), g)));
}

TEST(OpFastPath, ReluGradientIsTheMaskedGradient) {
  manual_seed(2);
  for (DType dtype : {kFloat32, kFloat64}) {
    Tensor x = randn({3, 1000}, dtype).requires_grad_(true);
    Tensor up = randn({3, 1000}, dtype);
    Tensor dx = autograd::grad({(relu(x) * up).sum()}, {x})[0];
    EXPECT_TRUE(same_bits(dx, where(x.detach() > 0, up, zeros_like(up))));
    // Second order: d/d up of <dx, v> is the same mask applied to v.
    Tensor xs = randn({50}, dtype).requires_grad_(true), u = randn({50}, dtype).requires_grad_(true);
    Tensor d = autograd::grad({(relu(xs) * u).sum()}, {xs}, {}, /*retain_graph=*/true, /*create_graph=*/true)[0];
    Tensor v = randn({50}, dtype);
    Tensor du = autograd::grad({(d * v).sum()}, {u})[0];
    EXPECT_TRUE(same_bits(du, where(xs.detach() > 0, v, zeros_like(v))));
  }
}

TEST(OpFastPath, ReluForwardOnEveryLayout) {
  manual_seed(3);
  for (DType dtype : {kFloat32, kFloat64})
    for (const Shape& shape : kSizes) {
      Tensor x = awkward(shape, dtype);
      EXPECT_TRUE(same_bits(relu(x), where(x < 0, zeros_like(x), x)));  // NaN and -0 stay, as in PyTorch
    }
  Tensor x = randn({64, 65});
  EXPECT_TRUE(same_bits(relu(x.t()), relu(x).t()));
}

// where's fast paths (contiguous, a broadcast value on either side) against its strided loop,
// reached by giving the same values as transposed views.
TEST(OpFastPath, WhereFastPathsEqualTheStridedLoop) {
  manual_seed(4);
  for (DType dtype : {kFloat32, kFloat64, kInt64}) {
    SCOPED_TRACE(::testing::Message() << dtype);
    const Shape shape{300, 301};
    Tensor c = rand({shape}) > 0.5;
    Tensor a = (randn(shape) * 10).to(dtype), b = (randn(shape) * 10).to(dtype);
    Tensor s = full({}, 2.5).to(dtype);
    Tensor ct = c.t().contiguous().t(), at = a.t().contiguous().t(), bt = b.t().contiguous().t();
    EXPECT_TRUE(same_bits(where(c, a, b), where(ct, at, bt)));
    EXPECT_TRUE(same_bits(where(c, s, b), where(ct, s, bt)));
    EXPECT_TRUE(same_bits(where(c, a, s), where(ct, at, s)));
    EXPECT_TRUE(same_bits(where(c, a, b).view({-1}).slice(0, 5, 17), where(c, a, b).view({-1}).slice(0, 5, 17)));
  }
}

// ---- batch norm -----------------------------------------------------------------------------------

struct BatchNormResult {
  Tensor y, dx, dw, db;
};

BatchNormResult run_batch_norm(const Tensor& x_in, const Tensor& w_in, const Tensor& b_in, const Tensor& up,
                               bool training) {
  Tensor x = x_in.detach().requires_grad_(true), w = w_in.detach().requires_grad_(true),
         b = b_in.detach().requires_grad_(true);
  const int64_t C = x.size(1);
  Tensor rm = zeros({C}, x.dtype()) + 0.1, rv = ones({C}, x.dtype()) * 1.5;
  Tensor y = F::batch_norm(x, rm, rv, w, b, training, 0.1, 1e-5);
  auto g = autograd::grad({(y * up).sum()}, {x, w, b});
  return {y.detach(), g[0], g[1], g[2]};
}

// The shapes of the workloads' batch norms (14x14 planes, 32x32, 4x4), a 1-d one and an odd one.
const Shape kBatchNormShapes[] = {{8, 24, 14, 14}, {4, 8, 32, 32}, {32, 16, 4, 4}, {40, 6}, {3, 5, 7, 3}};

TEST(BatchNormFastPath, MatchesTheStridedPathAndFloat64) {
  manual_seed(5);
  for (const Shape& shape : kBatchNormShapes)
    for (bool training : {true, false}) {
      SCOPED_TRACE(::testing::Message() << IntArrayRef(shape) << (training ? " training" : " eval"));
      const int64_t C = shape[1];
      // An offset mean: the variance must not lose digits to it.
      Tensor x = randn(shape, kFloat64) * 0.5 + 3, w = randn({C}, kFloat64), b = randn({C}, kFloat64);
      Tensor up = randn(shape, kFloat64);
      // Strided: the same values with the spatial dims transposed, so that no plane is one run.
      auto strided = [](const Tensor& t) { return t.dim() == 4 ? t.transpose(2, 3).contiguous().transpose(2, 3) : t; };
      BatchNormResult fast = run_batch_norm(x, w, b, up, training);
      BatchNormResult slow = run_batch_norm(strided(x), w, b, strided(up), training);
      EXPECT_LT(max_abs_diff(fast.y, slow.y), 1e-12);
      EXPECT_LT(max_abs_diff(fast.dx, slow.dx), 1e-11);
      EXPECT_LT(max_abs_diff(fast.dw, slow.dw), 1e-10);
      EXPECT_LT(max_abs_diff(fast.db, slow.db), 1e-10);
      // float32 through the fast path against float64.
      BatchNormResult f32 = run_batch_norm(x.to(kFloat32), w.to(kFloat32), b.to(kFloat32), up.to(kFloat32), training);
      const double n = static_cast<double>(x.numel() / C);
      EXPECT_LT(max_abs_diff(f32.y, fast.y), 2e-5);
      EXPECT_LT(max_abs_diff(f32.dx, fast.dx), 2e-5);
      EXPECT_LT(max_abs_diff(f32.dw, fast.dw), 1e-6 * n);
      EXPECT_LT(max_abs_diff(f32.db, fast.db), 1e-6 * n);
    }
}

TEST(BatchNormFastPath, SameBitsOnOneAndTwoThreads) {
  manual_seed(6);
  Tensor x = randn({16, 64, 14, 14}), w = randn({64}), b = randn({64}), up = randn({16, 64, 14, 14});
  const int threads = get_num_threads();
  set_num_threads(1);
  BatchNormResult one = run_batch_norm(x, w, b, up, true);
  set_num_threads(2);
  BatchNormResult two = run_batch_norm(x, w, b, up, true);
  set_num_threads(threads);
  EXPECT_TRUE(same_bits(one.y, two.y));
  EXPECT_TRUE(same_bits(one.dx, two.dx));
  EXPECT_TRUE(same_bits(one.dw, two.dw));
  EXPECT_TRUE(same_bits(one.db, two.db));
}

}  // namespace
}  // namespace cohort
