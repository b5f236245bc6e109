// optim::AveragedModel against PyTorch's torch.optim.swa_utils.AveragedModel
// (tests/fixtures/recipe.json, generate_recipe.py): an exponential moving average with batch norm's
// statistics averaged, the equal-weight average with buffers copied, an EMA with buffers copied; and
// its contract: a copy that needs no grad, integer buffers copied, another model refused unchanged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cohort/autograd/grad_mode.h"
#include "cohort/nn/batchnorm.h"
#include "cohort/nn/container.h"
#include "cohort/nn/linear.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/optim/averaged_model.h"
#include "support/error_of.h"
#include "support/pytorch_fixture.h"

using namespace cohort;
using cohort::testing::error_of;
using ::testing::HasSubstr;
using json = nlohmann::json;

namespace {

nn::Sequential linear_bn() {
  nn::Sequential m(nn::Linear(3, 2), nn::BatchNorm1d(2));
  m->to(kFloat64);
  return m;
}

optim::AveragedModelOptions options_of(const json& c) {
  optim::AveragedModelOptions o;
  if (!c.at("ema_decay").is_null()) o.ema_decay(c.at("ema_decay").get<double>());
  return o.use_buffers(c.at("use_buffers").get<bool>());
}

void set_state(nn::Module& m, const json& state) {
  NoGradGuard no_grad;
  for (const auto& item : m.state_dict())
    if (state.contains(item.key())) item.value().copy_(cohort::testing::decode_tensor(state.at(item.key())));
}

TEST(AveragedModel, MatchesPyTorch) {
  const json& cases = cohort::testing::load_fixture("recipe.json").at("averaged");
  ASSERT_EQ(cases.size(), 3u);
  for (const json& c : cases) {
    nn::Sequential model = linear_bn();
    optim::AveragedModel average(*model, options_of(c));
    for (const json& state : c.at("states")) {
      set_state(*model, state);
      average.update_parameters(*model);
    }
    EXPECT_EQ(average.n_averaged(), c.at("n_averaged").get<int64_t>());
    const nn::StateDict got = average.module().state_dict();
    for (const auto& [key, want] : c.at("averaged").items())
      EXPECT_TRUE(cohort::testing::matches_pytorch(c.at("name").get<std::string>() + " " + key, got[key], want, 1e-12));
    if (!c.at("use_buffers").get<bool>()) {  // the buffers are the model's last, as PyTorch 2.x copies them
      for (const auto& item : model->named_buffers())
        EXPECT_TRUE(average.module().named_buffers()[item.key()].equal(item.value())) << item.key();
      EXPECT_FALSE(c.at("averaged").contains("1.running_mean"));
    }
  }
}

TEST(AveragedModel, TheCopyNeedsNoGradAndIntegerBuffersAreCopied) {
  nn::Sequential model = linear_bn();
  optim::AveragedModel average(*model, optim::AveragedModelOptions().ema_decay(0.5).use_buffers(true));
  for (const Tensor& p : average.module().parameters()) EXPECT_FALSE(p.requires_grad());
  model->train();
  Tensor want;
  for (int i = 0; i < 3; ++i) {
    (void)model->forward(randn({4, 3}, kFloat64));  // moves running_mean, counts num_batches_tracked
    average.update_parameters(*model);
    const Tensor mean = model->state_dict()["1.running_mean"];
    want = i == 0 ? mean.clone() : want * 0.5 + mean * 0.5;
  }
  const nn::StateDict got = average.module().state_dict();
  EXPECT_TRUE(allclose(got["1.running_mean"], want, 0, 1e-15));
  EXPECT_EQ(got["1.num_batches_tracked"].item<int64_t>(), 3);
  EXPECT_EQ(average.n_averaged(), 3);
}

TEST(AveragedModel, AnotherModelIsRefusedAndNothingChanges) {
  nn::Sequential model = linear_bn();
  optim::AveragedModel average(*model, optim::AveragedModelOptions().ema_decay(0.9));
  average.update_parameters(*model);
  const Tensor before = average.module().state_dict()["0.weight"].clone();
  nn::Sequential wider(nn::Linear(3, 4), nn::BatchNorm1d(4));
  wider->to(kFloat64);
  EXPECT_THAT(error_of([&] { average.update_parameters(*wider); }),
              HasSubstr("AveragedModel::update_parameters: the model's parameters '0.weight' [4, 3] does not match "
                        "the averaged model's '0.weight' [2, 3]"));
  nn::Sequential shorter(nn::Linear(3, 2));
  EXPECT_THAT(error_of([&] { average.update_parameters(*shorter); }),
              HasSubstr("the averaged model has 4 parameters, the model given 2"));
  EXPECT_TRUE(average.module().state_dict()["0.weight"].equal(before));
  EXPECT_EQ(average.n_averaged(), 1);
}

TEST(AveragedModel, BadOptionsAreRefused) {
  nn::Sequential model = linear_bn();
  for (double bad : {-0.1, 1.0, 2.0})
    EXPECT_THAT(error_of([&] { optim::AveragedModel(*model, optim::AveragedModelOptions().ema_decay(bad)); }),
                HasSubstr("AveragedModel: ema_decay must be in [0, 1)"));
  optim::AveragedModel average(*model);
  EXPECT_THAT(error_of([&] { average.set_n_averaged(-1); }), HasSubstr("expected a count of updates"));
}

}  // namespace
