// Learning-rate schedulers against PyTorch (tests/fixtures/optim.json, "schedulers"): the lr of each
// group, and the cycled momentum, after construction and after each of 24 steps; state round
// trips and errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/pytorch_fixture.h"

#include "support/error_of.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cohort/ops/creation.h"
#include "cohort/optim/adagrad.h"
#include "cohort/optim/adam.h"
#include "cohort/optim/cosine_annealing_warm_restarts.h"
#include "cohort/optim/lambda_lr.h"
#include "cohort/optim/lr_scheduler.h"
#include "cohort/optim/sgd.h"

using namespace cohort;
using cohort::testing::error_of;
using namespace cohort::optim;
using ::testing::HasSubstr;
using json = nlohmann::json;

namespace {

using Params = std::vector<Tensor>;
struct Case {
  std::function<std::unique_ptr<Optimizer>(const Params&)> optimizer;
  std::function<std::unique_ptr<LRScheduler>(Optimizer&)> scheduler;
};

std::unique_ptr<Optimizer> sgd(const Params& p) { return std::make_unique<SGD>(p, SGDOptions(0.1)); }

// The cohort side of every scheduler case in generate_optim.py, by name.
const std::map<std::string, Case>& cases() {
  static const std::map<std::string, Case> m = {
      {"step", {sgd, [](Optimizer& o) { return std::make_unique<StepLR>(o, 7, 0.5); }}},
      {"step_two_groups",
       {[](const Params& p) {
          std::vector<OptimizerParamGroup> groups{Params{p[0]},
                                                  OptimizerParamGroup({p[1]}, std::make_unique<SGDOptions>(0.01))};
          return std::make_unique<SGD>(groups, SGDOptions(0.1));
        },
        [](Optimizer& o) { return std::make_unique<StepLR>(o, 3); }}},
      {"multistep",
       {sgd, [](Optimizer& o) { return std::make_unique<MultiStepLR>(o, std::vector<int64_t>{3, 8, 8, 15}, 0.3); }}},
      {"exponential", {sgd, [](Optimizer& o) { return std::make_unique<ExponentialLR>(o, 0.9); }}},
      {"cosine", {sgd, [](Optimizer& o) { return std::make_unique<CosineAnnealingLR>(o, 10, 0.001); }}},
      {"cosine_no_min",
       {[](const Params& p) { return std::make_unique<Adam>(p, AdamOptions(0.01)); },
        [](Optimizer& o) { return std::make_unique<CosineAnnealingLR>(o, 7); }}},
      {"linear_warmup", {sgd, [](Optimizer& o) { return std::make_unique<LinearLR>(o, 0.25, 1.0, 10); }}},
      {"linear_decay", {sgd, [](Optimizer& o) { return std::make_unique<LinearLR>(o, 1.0, 0.1, 8); }}},
      {"onecycle_sgd",
       {[](const Params& p) { return std::make_unique<SGD>(p, SGDOptions(0.1).momentum(0.9)); },
        [](Optimizer& o) { return std::make_unique<OneCycleLR>(o, OneCycleLROptions(0.5, 25)); }}},
      {"onecycle_adam_three_phase",
       {[](const Params& p) { return std::make_unique<Adam>(p, AdamOptions(0.01)); },
        [](Optimizer& o) {
          return std::make_unique<OneCycleLR>(
              o, OneCycleLROptions(0.02, 25).pct_start(0.25).div_factor(10).final_div_factor(100).three_phase(true));
        }}},
      {"onecycle_linear_no_momentum",
       {sgd,
        [](Optimizer& o) {
          return std::make_unique<OneCycleLR>(o, OneCycleLROptions(1.0, 25)
                                                     .anneal_strategy(AnnealStrategy::Linear)
                                                     .cycle_momentum(false)
                                                     .pct_start(0.4));
        }}},
      {"lambda",
       {sgd, [](Optimizer& o) { return std::make_unique<LambdaLR>(o, [](int64_t e) { return std::pow(0.95, e); }); }}},
      {"lambda_two_groups",
       {[](const Params& p) {
          std::vector<OptimizerParamGroup> groups{Params{p[0]},
                                                  OptimizerParamGroup({p[1]}, std::make_unique<SGDOptions>(0.01))};
          return std::make_unique<SGD>(groups, SGDOptions(0.1));
        },
        [](Optimizer& o) {
          std::vector<LRLambda> lambdas{[](int64_t e) { return 1.0 / static_cast<double>(e + 1); },
                                        [](int64_t e) { return std::min(1.0, static_cast<double>(e + 1) / 5.0); }};
          return std::make_unique<LambdaLR>(o, lambdas);
        }}},
      {"multiplicative",
       {sgd,
        [](Optimizer& o) {
          return std::make_unique<MultiplicativeLR>(o, [](int64_t e) { return e % 3 != 0 ? 0.9 : 0.5; });
        }}},
      {"warm_restarts", {sgd, [](Optimizer& o) { return std::make_unique<CosineAnnealingWarmRestarts>(o, 5, 1, 0.001); }}},
      {"warm_restarts_mult",
       {[](const Params& p) { return std::make_unique<Adam>(p, AdamOptions(0.01)); },
        [](Optimizer& o) { return std::make_unique<CosineAnnealingWarmRestarts>(o, 3, 2); }}},
  };
  return m;
}

const json& fixture() { return cohort::testing::load_fixture("optim.json"); }

Params params() { return {zeros({2}, kFloat64).requires_grad_(), zeros({3}, kFloat64).requires_grad_()}; }

}  // namespace

TEST(LRSchedulerFixture, EveryCaseHasACohortSide) {
  std::set<std::string> fixture_names, table_names;
  for (const auto& [name, _] : fixture()["schedulers"].items()) fixture_names.insert(name);
  for (const auto& [name, _] : cases()) table_names.insert(name);
  EXPECT_EQ(fixture_names, table_names);
}

TEST(LRSchedulerFixture, SchedulesMatchPyTorch) {
  for (const auto& [name, c] : cases()) {
    SCOPED_TRACE(name);
    auto opt = c.optimizer(params());
    auto sched = c.scheduler(*opt);
    const json& lrs = fixture()["schedulers"][name]["lrs"];
    const json& momentums = fixture()["schedulers"][name]["momentums"];
    for (size_t i = 0; i < lrs.size(); ++i) {
      for (size_t g = 0; g < opt->param_groups().size(); ++g) {
        const OptimizerOptions& o = opt->param_groups()[g].options();
        EXPECT_NEAR(o.get_lr(), lrs[i][g].get<double>(), 1e-10) << "lr of group " << g << " at epoch " << i;
        EXPECT_NEAR(o.get_momentum(), momentums[i][g].get<double>(), 1e-10)
            << "momentum of group " << g << " at epoch " << i;
        EXPECT_EQ(sched->get_last_lr()[g], o.get_lr());
      }
      opt->step();
      if (i + 1 < lrs.size()) sched->step();
    }
  }
}

TEST(LRScheduler, StateRoundTripContinuesLikeUninterrupted) {
  for (const auto& [name, c] : cases()) {
    SCOPED_TRACE(name);
    auto opt_a = c.optimizer(params());
    auto a = c.scheduler(*opt_a);
    for (int i = 0; i < 10; ++i) a->step();
    OptimizerState opt_state = opt_a->state_dict();
    LRSchedulerState state = a->state_dict();
    EXPECT_EQ(state.last_epoch, 10);

    auto opt_b = c.optimizer(params());
    auto b = c.scheduler(*opt_b);
    opt_b->load_state_dict(opt_state);  // the lrs (and momentum) live in the optimizer's state
    b->load_state_dict(state);
    EXPECT_EQ(b->get_last_lr(), a->get_last_lr());
    for (int i = 0; i < 10; ++i) {
      a->step();
      b->step();
      EXPECT_EQ(a->get_last_lr(), b->get_last_lr());
    }
  }
}

TEST(LRScheduler, ManualLrChangesCarryOver) {
  auto opt = sgd(params());
  StepLR sched(*opt, 2, 0.5);
  sched.step();
  opt->set_lr(1.0);
  sched.step();  // epoch 2: halves whatever the lr is now
  EXPECT_DOUBLE_EQ(opt->get_lr(), 0.5);
  EXPECT_EQ(sched.base_lrs(), std::vector<double>{0.1});
}

TEST(LRScheduler, Errors) {
  auto opt = sgd(params());
  EXPECT_THAT(error_of([&] { StepLR s(*opt, 0); }), HasSubstr("StepLR: step_size must be positive, got 0"));
  EXPECT_THAT(error_of([&] { CosineAnnealingLR s(*opt, 0); }), HasSubstr("T_max must be positive"));
  EXPECT_THAT(error_of([&] { LinearLR s(*opt, 0.0); }), HasSubstr("start_factor must be in (0, 1], got 0"));
  EXPECT_THAT(error_of([&] { LinearLR s(*opt, 0.5, 1.5); }), HasSubstr("end_factor must be in [0, 1], got 1.5"));
  EXPECT_THAT(error_of([&] { OneCycleLR s(*opt, OneCycleLROptions(0.1, 0)); }), HasSubstr("total_steps must be positive"));
  EXPECT_THAT(error_of([&] { OneCycleLR s(*opt, OneCycleLROptions(0.1, 10).pct_start(1.5)); }),
              HasSubstr("pct_start must be in [0, 1], got 1.5"));
  EXPECT_THAT(error_of([&] { OneCycleLR s(*opt, OneCycleLROptions(0.1, 10).max_lr(std::vector<double>{1, 2})); }),
              HasSubstr("expected 1 or 1 values for max_lr"));
  Adagrad adagrad(params());
  EXPECT_THAT(error_of([&] { OneCycleLR s(adagrad, OneCycleLROptions(0.1, 10)); }),
              HasSubstr("OneCycleLR: Adagrad has no momentum to cycle; hint: set cycle_momentum(false)"));
  OneCycleLR s(adagrad, OneCycleLROptions(0.1, 3).cycle_momentum(false));
  s.step();
  s.step();
  s.step();  // epoch 3 == total_steps: PyTorch allows it
  EXPECT_THAT(error_of([&] { s.step(); }), HasSubstr("tried to step 5 times, the schedule has 3 total steps"));
  StepLR late(*opt, 3);
  opt->add_param_group(Params{zeros({1}).requires_grad_()});
  EXPECT_THAT(error_of([&] { late.step(); }), HasSubstr("the optimizer has 2 parameter groups"));
  EXPECT_THAT(error_of([&] { CosineAnnealingWarmRestarts s(*opt, 0); }),
              HasSubstr("CosineAnnealingWarmRestarts: T_0 must be a positive integer, got 0"));
  EXPECT_THAT(error_of([&] { CosineAnnealingWarmRestarts s(*opt, 5, 0); }), HasSubstr("T_mult must be an integer >= 1, got 0"));
  EXPECT_THAT(error_of([&] { LambdaLR s(*opt, std::vector<LRLambda>{}); }),
              HasSubstr("LambdaLR: expected one lr_lambda per parameter group (2), got 0"));
  EXPECT_THAT(error_of([&] { MultiplicativeLR s(*opt, LRLambda{}); }), HasSubstr("MultiplicativeLR: lr_lambda 0 is empty"));
  LRSchedulerState wrong;
  EXPECT_THAT(error_of([&] { late.load_state_dict(wrong); }), HasSubstr("the state is for 0 parameter groups"));
}
