// The trainer's learning-rate schedules (app::Schedule) against PyTorch (tests/fixtures/recipe.json,
// generate_recipe.py): the rate of every step with and without --warmup-steps, per-epoch schedulers,
// plateau on given test losses and cosine-restarts; a schedule restored from its state mid-run
// continues as the one that was not stopped; older checkpoints' bare scheduler state still loads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "cohort/optim/sgd.h"
#include "support/error_of.h"
#include "support/pytorch_fixture.h"

#include "app/schedule.h"

using namespace cohort;
using cohort::testing::error_of;
using ::testing::HasSubstr;
using json = nlohmann::json;

namespace {

const json& cases() { return cohort::testing::load_fixture("recipe.json").at("schedules"); }

app::TrainConfig config_of(const json& c) {
  app::TrainConfig config;
  config.scheduler = c.at("scheduler");
  config.warmup_steps = c.at("warmup_steps");
  config.epochs = c.at("epochs");
  config.lr = c.at("lr");
  return config;
}

struct ScheduledRun {
  Tensor param = zeros({1}).requires_grad_();
  optim::SGD optimizer;
  app::Schedule schedule;
  explicit ScheduledRun(const json& c)
      : optimizer({param}, optim::SGDOptions(c.at("lr").get<double>())),
        schedule(config_of(c), optimizer, c.at("steps_per_epoch").get<int64_t>()) {}
};

// The rate of each step from step `from` (counted from 0) on, stepping `schedule` as the trainer does.
std::vector<double> rates(ScheduledRun& run, const json& c, int64_t from = 0) {
  const int64_t per_epoch = c.at("steps_per_epoch"), epochs = c.at("epochs");
  std::vector<double> lrs;
  for (int64_t step = from; step < per_epoch * epochs; ++step) {
    lrs.push_back(run.optimizer.get_lr());
    run.schedule.after_step(step + 1);
    if ((step + 1) % per_epoch == 0)
      run.schedule.after_epoch(c.contains("metrics") ? c.at("metrics").at((step + 1) / per_epoch - 1).get<double>() : 0);
  }
  return lrs;
}

void expect_rates(const std::vector<double>& got, const json& want, size_t from, const std::string& name) {
  ASSERT_EQ(got.size() + from, want.size()) << name;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want.at(i + from).get<double>(), 1e-12 * want.at(i + from).get<double>())
        << name << ", step " << i + from;
}

TEST(Schedule, EveryStepsRateIsPyTorchs) {
  ASSERT_GE(cases().size(), 9u);
  for (const json& c : cases()) {
    ScheduledRun run(c);
    expect_rates(rates(run, c), c.at("lrs"), 0, c.at("name"));
  }
}

TEST(Schedule, RestoredMidRunItContinuesAsTheScheduleThatWasNotStopped) {
  for (const json& c : cases()) {
    const int64_t per_epoch = c.at("steps_per_epoch");
    // Inside the warm-up, at an epoch's end and mid-epoch after it.
    for (int64_t stop : {int64_t{2}, per_epoch, per_epoch * 2 + 1}) {
      ScheduledRun first(c);
      std::vector<double> lrs;
      for (int64_t step = 0; step < stop; ++step) {
        lrs.push_back(first.optimizer.get_lr());
        first.schedule.after_step(step + 1);
        if ((step + 1) % per_epoch == 0)
          first.schedule.after_epoch(c.contains("metrics") ? c.at("metrics").at((step + 1) / per_epoch - 1).get<double>()
                                                           : 0);
      }
      // Through JSON text, as a checkpoint keeps it; the optimizer's own state holds its lr.
      const json saved = json::parse(first.schedule.state().dump());
      ScheduledRun second(c);
      second.optimizer.set_lr(first.optimizer.get_lr());
      second.schedule.load_state(saved, "test: ");
      expect_rates(rates(second, c, stop), c.at("lrs"), static_cast<size_t>(stop),
                   c.at("name").get<std::string>() + " resumed after step " + std::to_string(stop));
    }
  }
}

TEST(Schedule, AnOlderCheckpointsBareSchedulerStateLoads) {
  app::TrainConfig config;
  config.scheduler = "cosine";
  config.epochs = 4;
  Tensor p = zeros({1}).requires_grad_();
  optim::SGD optimizer({p}, optim::SGDOptions(0.1));
  app::Schedule schedule(config, optimizer, 3);
  schedule.after_epoch(0);
  const json bare = schedule.state().at("lr_scheduler");  // what older cohorts stored as "scheduler"
  optim::SGD other({p}, optim::SGDOptions(0.1));
  other.set_lr(optimizer.get_lr());
  app::Schedule restored(config, other, 3);
  restored.load_state(bare, "test: ");
  schedule.after_epoch(0);
  restored.after_epoch(0);
  EXPECT_DOUBLE_EQ(other.get_lr(), optimizer.get_lr());

  app::TrainConfig none;
  app::Schedule plain(none, other, 3);
  EXPECT_NO_THROW(plain.load_state(json(), "test: "));
}

TEST(Schedule, AStateOfAnotherScheduleIsRefusedByName) {
  app::TrainConfig cosine, plateau;
  cosine.scheduler = "cosine";
  plateau.scheduler = "plateau";
  Tensor p = zeros({1}).requires_grad_();
  optim::SGD optimizer({p}, optim::SGDOptions(0.1));
  const json state = app::Schedule(cosine, optimizer, 3).state();
  app::Schedule other(plateau, optimizer, 3);
  EXPECT_THAT(error_of([&] { other.load_state(state, "cohort: f: "); }),
              HasSubstr("cohort: f: scheduler: the checkpoint holds the state of another schedule"));
  json broken = app::Schedule(plateau, optimizer, 3).state();
  broken["plateau"]["num_bad_epochs"] = "two";
  EXPECT_THAT(error_of([&] { other.load_state(broken, "cohort: f: "); }),
              HasSubstr("cohort: f: scheduler: 'num_bad_epochs' must be an integer"));
}

}  // namespace
