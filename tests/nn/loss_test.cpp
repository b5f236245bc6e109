// nll_loss's fused loops (Note [Fused nll_loss]) beyond the op table's values and gradients: the
// errors they raise, the gradient under create_graph, and cross_entropy on top of them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include <cohort/cohort.h>

#include "support/error_of.h"

using namespace cohort;
using cohort::testing::error_of;
using ::testing::HasSubstr;
namespace F = cohort::nn::functional;

TEST(NllLoss, ATargetOutOfRangeNamesItTheSampleAndTheClassCount) {
  Tensor logp = randn({3, 4}).log_softmax(1);
  EXPECT_THAT(error_of([&] { F::nll_loss(logp, tensor({0, 4, 1})); }),
              HasSubstr("nll_loss: target 4 is out of bounds for 4 classes (sample 1)"));
  EXPECT_THAT(error_of([&] { F::nll_loss(logp, tensor({0, 1, -2})); }), HasSubstr("target -2 is out of bounds"));
  // ignore_index is exempt from the range, wherever it lies.
  EXPECT_NO_THROW(F::nll_loss(logp, tensor({0, -7, 1}), F::NLLLossOptions().ignore_index(-7)));
}

TEST(NllLoss, ArgumentErrorsNameWhatWasExpected) {
  Tensor logp = randn({2, 3}).log_softmax(1);
  EXPECT_THAT(error_of([&] { F::nll_loss(logp, tensor({0.0f, 1.0f})); }), HasSubstr("expected int64 class indices"));
  EXPECT_THAT(error_of([&] { F::nll_loss(tensor({{1, 2}, {3, 4}}), tensor({0, 1})); }),
              HasSubstr("expected floating-point log-probabilities as input, got int64"));
  EXPECT_THAT(error_of([&] { F::nll_loss(logp, tensor({0, 1}), F::NLLLossOptions().weight(ones({4}))); }),
              HasSubstr("weight must have one entry per class (3), got shape [4]"));
  Tensor w = ones({3}, requires_grad());
  EXPECT_THAT(error_of([&] { F::nll_loss(logp, tensor({0, 1}), F::NLLLossOptions().weight(w)); }),
              HasSubstr("hint: pass weight.detach()"));
  NoGradGuard no_grad;  // evaluation with a trainable weight tensor is fine
  EXPECT_NO_THROW(F::nll_loss(logp, tensor({0, 1}), F::NLLLossOptions().weight(w)));
}

TEST(NllLoss, CreateGraphGradientIsDifferentiableInTheIncomingGradient) {
  // loss = sum_i v_i * nll_i: d loss / d x = -v_i at (i, t_i); its sum's derivative in v_i is -1.
  Tensor x = randn({3, 4}, TensorOptions(kFloat64).requires_grad(true));
  Tensor v = tensor({0.5, 2.0, 3.0}, TensorOptions(kFloat64).requires_grad(true));
  Tensor target = tensor({1, 3, 0});
  Tensor loss = (F::nll_loss(x, target, F::NLLLossOptions().reduction(kNone)) * v).sum();
  Tensor gx = autograd::grad({loss}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
  Tensor expected = zeros({3, 4}, kFloat64);
  expected.index_put_({0, 1}, -0.5);
  expected.index_put_({1, 3}, -2.0);
  expected.index_put_({2, 0}, -3.0);
  EXPECT_TRUE(gx.allclose(expected));
  gx.sum().backward();
  EXPECT_TRUE(v.grad().allclose(full({3}, -1.0, kFloat64))) << v.grad();
}

TEST(NllLoss, MeanIsWeightedAndAllIgnoredGivesNaNAsPyTorch) {
  Tensor logp = tensor({{-1.0, -2.0}, {-3.0, -4.0}, {-5.0, -6.0}}, kFloat64);
  Tensor w = tensor({2.0, 0.5}, kFloat64);
  // (2 * 1 + 0.5 * 4 + 2 * 5) / (2 + 0.5 + 2)
  Tensor loss = F::nll_loss(logp, tensor({0, 1, 0}), F::NLLLossOptions().weight(w));
  EXPECT_NEAR(loss.item<double>(), 14.0 / 4.5, 1e-12);
  EXPECT_TRUE(std::isnan(F::nll_loss(logp, tensor({-100, -100, -100})).item<double>()));
  EXPECT_EQ(F::nll_loss(logp.index({0}), tensor(1)).item<double>(), 2.0);  // one sample, [C] input
}
