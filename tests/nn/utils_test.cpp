// Gradient clipping against hand computations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "cohort/nn/utils.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"

using namespace cohort;

namespace {

// A parameter of the given values whose grad is `grad`.
Tensor param_with_grad(std::vector<double> grad) {
  Tensor p = zeros({static_cast<int64_t>(grad.size())}, kFloat64).requires_grad_();
  p.mutable_grad() = tensor(grad);
  return p;
}

}  // namespace

TEST(ClipGrad, NormScalesAllGradsTogether) {
  Tensor a = param_with_grad({3, 4});      // |a| = 5
  Tensor b = param_with_grad({12});        // |b| = 12, total = 13
  Tensor c = zeros({2}).requires_grad_();  // no grad: skipped
  double total = nn::utils::clip_grad_norm_({a, b, c}, 6.5);
  EXPECT_DOUBLE_EQ(total, 13.0);
  const double coef = 6.5 / (13.0 + 1e-6);
  EXPECT_NEAR(a.grad()[0].item<double>(), 3 * coef, 1e-15);
  EXPECT_NEAR(a.grad()[1].item<double>(), 4 * coef, 1e-15);
  EXPECT_NEAR(b.grad()[0].item<double>(), 12 * coef, 1e-15);
  EXPECT_FALSE(c.grad().defined());
}

TEST(ClipGrad, NormBelowTheMaximumLeavesGradsAlone) {
  Tensor a = param_with_grad({3, 4});
  EXPECT_DOUBLE_EQ(nn::utils::clip_grad_norm_(a, 10.0), 5.0);
  EXPECT_EQ(a.grad()[1].item<double>(), 4.0);
}

TEST(ClipGrad, OtherNorms) {
  Tensor a = param_with_grad({-3, 4});
  Tensor b = param_with_grad({-12});
  EXPECT_DOUBLE_EQ(nn::utils::clip_grad_norm_({a, b}, 100.0, 1.0), 19.0);
  EXPECT_DOUBLE_EQ(nn::utils::clip_grad_norm_({a, b}, 100.0, INFINITY), 12.0);
  // p = 3: (27 + 64 + 1728)^(1/3)
  EXPECT_NEAR(nn::utils::clip_grad_norm_({a, b}, 100.0, 3.0), std::cbrt(1819.0), 1e-12);
  EXPECT_DOUBLE_EQ(nn::utils::clip_grad_norm_({a, b}, 1.2, INFINITY), 12.0);
  EXPECT_NEAR(b.grad()[0].item<double>(), -12 * 1.2 / (12 + 1e-6), 1e-15);
  EXPECT_EQ(nn::utils::clip_grad_norm_(std::vector<Tensor>{}, 1.0), 0.0);
}

TEST(ClipGrad, NonFinite) {
  Tensor a = param_with_grad({NAN, 1});
  EXPECT_THROW(nn::utils::clip_grad_norm_(a, 1.0, 2.0, /*error_if_nonfinite=*/true), Error);
  EXPECT_EQ(a.grad()[1].item<double>(), 1.0);  // unchanged when it throws
}

TEST(ClipGrad, Value) {
  Tensor a = param_with_grad({-3, 0.5, 4});
  nn::utils::clip_grad_value_({a}, 1.0);
  EXPECT_TRUE(equal(a.grad(), tensor(std::vector<double>{-1, 0.5, 1})));
}
