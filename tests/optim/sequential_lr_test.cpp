// SequentialLR and ChainedScheduler against PyTorch (tests/fixtures/optim.json, "composite_schedulers"):
// the lr of each group after construction and after each of 24 steps; state round trips; errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/error_of.h"
#include "support/pytorch_fixture.h"

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cohort/ops/creation.h"
#include "cohort/optim/adam.h"
#include "cohort/optim/lambda_lr.h"
#include "cohort/optim/sequential_lr.h"
#include "cohort/optim/sgd.h"

using namespace cohort;
using cohort::testing::error_of;
using namespace cohort::optim;
using ::testing::HasSubstr;
using json = nlohmann::json;

namespace {

using Params = std::vector<Tensor>;
using Schedulers = std::vector<std::shared_ptr<LRScheduler>>;

// Either composite, behind the calls the tests make.
struct Driver {
  std::function<void()> step;
  std::function<std::vector<double>()> last_lr;
};

template <class S>
Driver drive(std::shared_ptr<S> s) {
  return {[s] { s->step(); }, [s] { return s->get_last_lr(); }};
}

struct Case {
  std::function<std::unique_ptr<Optimizer>(const Params&)> optimizer;
  std::function<Driver(Optimizer&)> scheduler;
};

std::unique_ptr<Optimizer> sgd(const Params& p) { return std::make_unique<SGD>(p, SGDOptions(0.1)); }

// The cohort side of every case of COMPOSITE_SCHEDULERS in generate_optim.py, by name.
const std::map<std::string, Case>& cases() {
  static const std::map<std::string, Case> m = {
      {"sequential_warmup_cosine",
       {sgd,
        [](Optimizer& o) {
          Schedulers s{std::make_shared<LinearLR>(o, 0.25, 1.0, 4)};
          s.push_back(std::make_shared<CosineAnnealingLR>(o, 10, 0.001));
          return drive(std::make_shared<SequentialLR>(o, s, std::vector<int64_t>{5}));
        }}},
      {"sequential_three_two_groups",
       {[](const Params& p) {
          std::vector<OptimizerParamGroup> groups{Params{p[0]},
                                                  OptimizerParamGroup({p[1]}, std::make_unique<SGDOptions>(0.01))};
          return std::make_unique<SGD>(groups, SGDOptions(0.1));
        },
        [](Optimizer& o) {
          Schedulers s{std::make_shared<ExponentialLR>(o, 0.9)};
          s.push_back(std::make_shared<StepLR>(o, 3, 0.5));
          s.push_back(std::make_shared<LambdaLR>(o, [](int64_t e) { return 1.0 / static_cast<double>(e + 1); }));
          return drive(std::make_shared<SequentialLR>(o, s, std::vector<int64_t>{4, 10}));
        }}},
      {"sequential_multiplicative",
       {sgd,
        [](Optimizer& o) {
          Schedulers s{std::make_shared<LinearLR>(o, 0.5, 1.0, 3)};
          s.push_back(std::make_shared<MultiplicativeLR>(o, [](int64_t) { return 0.95; }));
          return drive(std::make_shared<SequentialLR>(o, s, std::vector<int64_t>{3}));
        }}},
      {"chained_linear_exponential",
       {sgd,
        [](Optimizer& o) {
          Schedulers s{std::make_shared<LinearLR>(o, 0.25, 1.0, 5)};
          s.push_back(std::make_shared<ExponentialLR>(o, 0.9));
          return drive(std::make_shared<ChainedScheduler>(o, s));
        }}},
      {"chained_step_lambda",
       {[](const Params& p) { return std::make_unique<Adam>(p, AdamOptions(0.01)); },
        [](Optimizer& o) {
          Schedulers s{std::make_shared<StepLR>(o, 4, 0.5)};
          s.push_back(std::make_shared<LambdaLR>(o, [](int64_t e) { return 1 + 0.1 * static_cast<double>(e); }));
          return drive(std::make_shared<ChainedScheduler>(o, s));
        }}},
  };
  return m;
}

const json& fixture() { return cohort::testing::load_fixture("optim.json"); }

Params params() { return {zeros({2}, kFloat64).requires_grad_(), zeros({3}, kFloat64).requires_grad_()}; }

}  // namespace

TEST(SequentialLRFixture, EveryCaseHasACohortSide) {
  std::set<std::string> fixture_names, table_names;
  for (const auto& [name, _] : fixture()["composite_schedulers"].items()) fixture_names.insert(name);
  for (const auto& [name, _] : cases()) table_names.insert(name);
  EXPECT_EQ(fixture_names, table_names);
}

TEST(SequentialLRFixture, SchedulesMatchPyTorch) {
  for (const auto& [name, c] : cases()) {
    SCOPED_TRACE(name);
    auto opt = c.optimizer(params());
    Driver sched = c.scheduler(*opt);
    const json& lrs = fixture()["composite_schedulers"][name]["lrs"];
    for (size_t i = 0; i < lrs.size(); ++i) {
      for (size_t g = 0; g < opt->param_groups().size(); ++g) {
        EXPECT_NEAR(opt->get_lr(g), lrs[i][g].get<double>(), 1e-10) << "lr of group " << g << " at epoch " << i;
        EXPECT_EQ(sched.last_lr()[g], opt->get_lr(g));
      }
      opt->step();
      if (i + 1 < lrs.size()) sched.step();
    }
  }
}

TEST(SequentialLR, StateRoundTripContinuesLikeUninterrupted) {
  auto build = [](Optimizer& o) {
    Schedulers s{std::make_shared<LinearLR>(o, 0.25, 1.0, 4)};
    s.push_back(std::make_shared<CosineAnnealingLR>(o, 10, 0.001));
    return std::make_unique<SequentialLR>(o, s, std::vector<int64_t>{5});
  };
  auto opt_a = sgd(params()), opt_b = sgd(params());
  auto a = build(*opt_a), b = build(*opt_b);
  for (int i = 0; i < 7; ++i) a->step();
  opt_b->load_state_dict(opt_a->state_dict());
  b->load_state_dict(a->state_dict());
  EXPECT_EQ(b->last_epoch(), 7);
  for (int i = 0; i < 10; ++i) {
    a->step();
    b->step();
    EXPECT_EQ(a->get_last_lr(), b->get_last_lr());
  }
}

TEST(SequentialLR, Errors) {
  auto opt = sgd(params());
  Schedulers one{std::make_shared<ExponentialLR>(*opt, 0.9)};
  EXPECT_THAT(error_of([&] { SequentialLR s(*opt, {}, {}); }), HasSubstr("SequentialLR: expected at least one scheduler, got none"));
  EXPECT_THAT(error_of([&] { SequentialLR s(*opt, one, {3}); }),
              HasSubstr("SequentialLR: expected 0 milestones (one fewer than the schedulers), got 1"));
  EXPECT_THAT(error_of([&] { ChainedScheduler s(*opt, Schedulers{nullptr}); }), HasSubstr("ChainedScheduler: scheduler 0 is null"));
  ChainedScheduler chained(*opt, one);
  EXPECT_THAT(error_of([&] { chained.load_state_dict({}); }), HasSubstr("the state is for 0 schedulers, this one has 1"));
}
