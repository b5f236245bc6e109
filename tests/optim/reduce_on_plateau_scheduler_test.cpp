// ReduceLROnPlateauScheduler against PyTorch's ReduceLROnPlateau (tests/fixtures/optim.json, "plateaus"):
// the lrs after construction and after each step(plateau_metrics[i]); and the errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/error_of.h"
#include "support/pytorch_fixture.h"

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "cohort/ops/creation.h"
#include "cohort/optim/reduce_on_plateau_scheduler.h"
#include "cohort/optim/sgd.h"

using namespace cohort;
using cohort::testing::error_of;
using namespace cohort::optim;
using ::testing::HasSubstr;
using json = nlohmann::json;

namespace {

using Params = std::vector<Tensor>;
using Plateau = ReduceLROnPlateauScheduler;
struct Case {
  std::function<std::unique_ptr<Optimizer>(const Params&)> optimizer;
  std::function<std::unique_ptr<Plateau>(Optimizer&)> scheduler;
};

std::unique_ptr<Optimizer> sgd(const Params& p) { return std::make_unique<SGD>(p, SGDOptions(0.1)); }

// The cohort side of every case of PLATEAUS in generate_optim.py, by name.
const std::map<std::string, Case>& cases() {
  static const std::map<std::string, Case> m = {
      {"plateau_min_rel", {sgd, [](Optimizer& o) { return std::make_unique<Plateau>(o, Plateau::min, 0.5, 2); }}},
      {"plateau_max_abs_cooldown",
       {sgd,
        [](Optimizer& o) {
          return std::make_unique<Plateau>(o, Plateau::max, 0.3, 1, 0.05, Plateau::abs, 2, std::vector<double>{0.005});
        }}},
      {"plateau_min_lr_groups",
       {[](const Params& p) {
          std::vector<OptimizerParamGroup> groups{Params{p[0]},
                                                  OptimizerParamGroup({p[1]}, std::make_unique<SGDOptions>(0.01))};
          return std::make_unique<SGD>(groups, SGDOptions(0.1));
        },
        [](Optimizer& o) {
          return std::make_unique<Plateau>(o, Plateau::min, 0.5, 0, 0.01, Plateau::rel, 0,
                                           std::vector<double>{0.02, 0.001}, 1e-3);
        }}},
  };
  return m;
}

const json& fixture() { return cohort::testing::load_fixture("optim.json"); }

Params params() { return {zeros({2}, kFloat64).requires_grad_(), zeros({3}, kFloat64).requires_grad_()}; }

}  // namespace

TEST(ReduceLROnPlateauSchedulerFixture, EveryCaseHasACohortSide) {
  std::set<std::string> fixture_names, table_names;
  for (const auto& [name, _] : fixture()["plateaus"].items()) fixture_names.insert(name);
  for (const auto& [name, _] : cases()) table_names.insert(name);
  EXPECT_EQ(fixture_names, table_names);
}

TEST(ReduceLROnPlateauSchedulerFixture, SchedulesMatchPyTorch) {
  const auto metrics = fixture()["plateau_metrics"].get<std::vector<double>>();
  for (const auto& [name, c] : cases()) {
    SCOPED_TRACE(name);
    auto opt = c.optimizer(params());
    auto sched = c.scheduler(*opt);
    const json& lrs = fixture()["plateaus"][name];
    ASSERT_EQ(lrs.size(), metrics.size() + 1);
    for (size_t i = 0; i < lrs.size(); ++i) {
      if (i > 0) sched->step(metrics[i - 1]);
      for (size_t g = 0; g < opt->param_groups().size(); ++g)
        EXPECT_NEAR(opt->get_lr(g), lrs[i][g].get<double>(), 1e-12) << "lr of group " << g << " after step " << i;
    }
    EXPECT_EQ(sched->last_epoch(), static_cast<int64_t>(metrics.size()));
  }
}

TEST(ReduceLROnPlateauScheduler, Errors) {
  auto opt = sgd(params());
  const char* name = "ReduceLROnPlateauScheduler: ";
  EXPECT_THAT(error_of([&] { Plateau s(*opt, Plateau::min, 1.0); }),
              HasSubstr(std::string(name) + "factor must be in [0, 1) (the lr is multiplied by it), got 1"));
  EXPECT_THAT(error_of([&] { Plateau s(*opt, Plateau::min, 0.1, -1); }), HasSubstr("patience must be non-negative, got -1"));
  EXPECT_THAT(error_of([&] { Plateau s(*opt, Plateau::min, 0.1, 10, -1e-4); }),
              HasSubstr("threshold must be non-negative, got -0.0001"));
  EXPECT_THAT(error_of([&] { Plateau s(*opt, Plateau::min, 0.1, 10, 1e-4, Plateau::rel, -2); }),
              HasSubstr("cooldown must be non-negative, got -2"));
  EXPECT_THAT(error_of([&] { Plateau s(*opt, Plateau::min, 0.1, 10, 1e-4, Plateau::rel, 0, {0.1, 0.2}); }),
              HasSubstr("expected 1 or 1 values for min_lr (one per parameter group), got 2"));
  Plateau late(*opt);
  opt->add_param_group(Params{zeros({1}).requires_grad_()});
  EXPECT_THAT(error_of([&] { late.step(1.0); }), HasSubstr("the optimizer has 2 parameter groups"));
}

// A scheduler restored from its state (with the optimizer's lr) continues as the one never stopped:
// through a reduction, its cooldown and the bad epochs counted before the stop.
TEST(ReduceLROnPlateauScheduler, ARestoredStateContinuesTheSameWay) {
  const std::vector<double> metrics{1.0, 0.9, 0.95, 0.97, 0.96, 0.99, 0.8, 0.85, 0.9, 0.91};
  auto whole_opt = sgd(params());
  Plateau whole(*whole_opt, Plateau::min, 0.5, 1, 1e-4, Plateau::rel, 1);
  std::vector<double> want;
  for (double m : metrics) {
    whole.step(m);
    want.push_back(whole_opt->get_lr());
  }
  for (size_t stop = 1; stop < metrics.size(); ++stop) {
    auto first_opt = sgd(params());
    Plateau first(*first_opt, Plateau::min, 0.5, 1, 1e-4, Plateau::rel, 1);
    for (size_t i = 0; i < stop; ++i) first.step(metrics[i]);
    auto second_opt = sgd(params());
    second_opt->set_lr(first_opt->get_lr());
    Plateau second(*second_opt, Plateau::min, 0.5, 1, 1e-4, Plateau::rel, 1);
    second.load_state_dict(first.state_dict());
    EXPECT_EQ(second.best(), first.best());
    EXPECT_EQ(second.last_epoch(), first.last_epoch());
    for (size_t i = stop; i < metrics.size(); ++i) {
      second.step(metrics[i]);
      EXPECT_DOUBLE_EQ(second_opt->get_lr(), want[i]) << "stopped after " << stop << ", epoch " << i;
    }
  }
  Plateau s(*whole_opt);
  EXPECT_THAT(error_of([&] { s.load_state_dict({.best = 1, .num_bad_epochs = -1}); }),
              HasSubstr("ReduceLROnPlateauScheduler::load_state_dict: the counts must be non-negative, got "
                        "num_bad_epochs -1"));
}
