// nn::init: the ranges and spreads PyTorch's initialisers give, their errors, and the guard that
// lets Cloneable::clone and models' clone_model skip draws whose values are overwritten anyway.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include <cohort/cohort.h>

#include "support/error_of.h"

using namespace cohort;
using cohort::testing::error_of;
using ::testing::HasSubstr;
namespace init = cohort::nn::init;

TEST(Init, UniformAndKaimingUniformStayInTheirBounds) {
  manual_seed(0);
  Tensor t = empty({256, 100});
  init::uniform_(t, -0.5, 2.0);
  EXPECT_GE(t.min().item<float>(), -0.5f);
  EXPECT_LT(t.max().item<float>(), 2.0f);
  EXPECT_NEAR(t.mean().item<float>(), 0.75, 0.02);
  // PyTorch's default for Linear/Conv weights: a = sqrt(5), fan_in = 100 -> bound 1 / sqrt(100).
  init::kaiming_uniform_(t, std::sqrt(5.0));
  EXPECT_LE(t.abs().max().item<float>(), 0.1f);
  EXPECT_GT(t.abs().max().item<float>(), 0.099f);
}

TEST(Init, NormalFamiliesHaveTheirStandardDeviation) {
  manual_seed(1);
  Tensor t = empty({512, 64, 3, 3});  // fan_in 576, fan_out 4608
  init::kaiming_normal_(t, 0, init::FanMode::FanOut, init::Nonlinearity::ReLU);
  EXPECT_NEAR(t.std().item<float>(), std::sqrt(2.0 / 4608), 2e-4);
  init::xavier_normal_(t);
  EXPECT_NEAR(t.std().item<float>(), std::sqrt(2.0 / (576 + 4608)), 2e-4);
  init::normal_(t, 3.0, 0.5);
  EXPECT_NEAR(t.mean().item<float>(), 3.0, 0.01);
  EXPECT_THAT(error_of([] { init::kaiming_uniform_(empty({4})); }), HasSubstr("fewer than 2 dimensions"));
}

TEST(Init, SkipRandomInitGuardFillsZerosAndDrawsNothing) {
  manual_seed(2);
  const std::string before = default_generator().get_state();
  Tensor t = empty({3, 4});
  {
    init::SkipRandomInitGuard skip;
    init::kaiming_uniform_(t, std::sqrt(5.0));
    EXPECT_TRUE(t.equal(zeros({3, 4})));
    init::normal_(t, 1.0, 2.0);
    EXPECT_TRUE(t.equal(zeros({3, 4})));
    init::ones_(t);  // constants are not draws: they still apply
    EXPECT_TRUE(t.equal(ones({3, 4})));
  }
  EXPECT_TRUE(default_generator().get_state() == before);
  init::uniform_(t);
  EXPECT_FALSE(t.equal(ones({3, 4})));  // the guard is gone
}

TEST(Init, ClonesAndModelClonesEqualTheirSourceWithoutDrawing) {
  manual_seed(3);
  auto net = models::create("blitz-cnn");
  auto linear = nn::Linear(8, 3);
  const std::string before = default_generator().get_state();
  auto copy = net->clone_model(Device("cpu:0"));
  auto linear_copy = std::dynamic_pointer_cast<nn::LinearImpl>(linear->clone());
  EXPECT_TRUE(default_generator().get_state() == before);
  auto mine = net->named_parameters(), theirs = copy->named_parameters();
  ASSERT_EQ(mine.size(), theirs.size());
  for (size_t i = 0; i < mine.size(); ++i) EXPECT_TRUE(mine[i].value().equal(theirs[i].value())) << mine[i].key();
  EXPECT_TRUE(linear->weight.equal(linear_copy->weight));
  EXPECT_TRUE(linear->bias.equal(linear_copy->bias));
}

// libtorch's spellings of the fan mode and the nonlinearity: the same draws as cohort's enums.
TEST(Init, LibtorchModeAndNonlinearityTagsMeanTheEnums) {
  EXPECT_DOUBLE_EQ(init::calculate_gain(kReLU), std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(init::calculate_gain(kTanh), 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(init::calculate_gain(kLeakyReLU, 0.2), std::sqrt(2.0 / 1.04));
  EXPECT_DOUBLE_EQ(init::calculate_gain(kSELU), 0.75);
  for (auto gain : {init::calculate_gain(kLinear), init::calculate_gain(kConv2D), init::calculate_gain(kSigmoid),
                    init::calculate_gain(kConvTranspose3D)})
    EXPECT_DOUBLE_EQ(gain, 1.0);
  Tensor a = empty({32, 8, 3, 3}), b = empty({32, 8, 3, 3});
  manual_seed(5);
  init::kaiming_normal_(a, 0, kFanOut, kReLU);
  manual_seed(5);
  init::kaiming_normal_(b, 0, init::FanMode::FanOut, init::Nonlinearity::ReLU);
  EXPECT_TRUE(equal(a, b));
  manual_seed(5);
  init::kaiming_uniform_(a, 0.1, kFanIn, kLeakyReLU);
  manual_seed(5);
  init::kaiming_uniform_(b, 0.1, init::FanMode::FanIn, init::Nonlinearity::LeakyReLU);
  EXPECT_TRUE(equal(a, b));
}
