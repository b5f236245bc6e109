// The trainer's learning-rate schedule (schedule.h).
#include "app/schedule.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "cohort/core/error.h"
#include "cohort/optim/cosine_annealing_warm_restarts.h"

namespace cohort::app {

namespace {

std::vector<double> group_lrs(const optim::Optimizer& optimizer) {
  std::vector<double> lrs;
  for (size_t g = 0; g < optimizer.param_groups().size(); ++g) lrs.push_back(optimizer.get_lr(g));
  return lrs;
}

void set_group_lrs(optim::Optimizer& optimizer, const std::vector<double>& lrs, double factor = 1) {
  for (size_t g = 0; g < lrs.size(); ++g) optimizer.set_lr(g, lrs[g] * factor);
}

// JSON has no infinities; plateau's best is one until the first epoch ends.
nlohmann::json number(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : v > 0 ? "inf" : "-inf";
}

double number_from(const nlohmann::json& j) {
  if (j.is_number()) return j.get<double>();
  const std::string s = j.get<std::string>();
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  throw Error("expected a number, got \"" + escape_text(s) + "\"");
}

nlohmann::json lr_scheduler_json(const optim::LRScheduler& scheduler) {
  const optim::LRSchedulerState s = scheduler.state_dict();
  return {{"last_epoch", s.last_epoch}, {"step_count", s.step_count}, {"base_lrs", s.base_lrs},
          {"last_lrs", s.last_lrs}};
}

optim::LRSchedulerState lr_scheduler_state(const nlohmann::json& s, const std::string& where) {
  optim::LRSchedulerState state;
  state.last_epoch = integer_at(s, "last_epoch", where);
  state.step_count = integer_at(s, "step_count", where);
  state.base_lrs = s.at("base_lrs").get<std::vector<double>>();
  state.last_lrs = s.at("last_lrs").get<std::vector<double>>();
  return state;
}

}  // namespace

Schedule::Schedule(const TrainConfig& c, optim::Optimizer& optimizer, int64_t steps_per_epoch)
    : optimizer_(&optimizer), warmup_steps_(c.warmup_steps) {
  if (c.scheduler == "step") {
    std::vector<int64_t> milestones{std::max<int64_t>(1, c.epochs / 2), std::max<int64_t>(1, c.epochs * 3 / 4)};
    milestones.erase(std::unique(milestones.begin(), milestones.end()), milestones.end());
    scheduler_ = std::make_unique<optim::MultiStepLR>(optimizer, milestones, 0.1);
  } else if (c.scheduler == "cosine") {
    scheduler_ = std::make_unique<optim::CosineAnnealingLR>(optimizer, c.epochs);
  } else if (c.scheduler == "onecycle") {
    scheduler_ = std::make_unique<optim::OneCycleLR>(optimizer,
                                                     optim::OneCycleLROptions(c.lr, c.epochs * steps_per_epoch));
    per_step_ = true;
  } else if (c.scheduler == "cosine-restarts") {
    scheduler_ = std::make_unique<optim::CosineAnnealingWarmRestarts>(optimizer, std::max<int64_t>(steps_per_epoch, 1),
                                                                      /*T_mult=*/2);
    per_step_ = true;
  } else if (c.scheduler == "plateau") {
    plateau_ = std::make_unique<optim::ReduceLROnPlateauScheduler>(optimizer, optim::ReduceLROnPlateauScheduler::min,
                                                                   /*factor=*/0.1, /*patience=*/2);
  } else if (c.scheduler != "none") {
    throw Error("cohort train: --scheduler '" + c.scheduler + "' is not known");
  }
  scheduled_ = group_lrs(optimizer);
  apply_warmup(0);
}

void Schedule::apply_warmup(int64_t steps_done) {
  const double factor = steps_done < warmup_steps_ ? static_cast<double>(steps_done + 1) / warmup_steps_ : 1.0;
  set_group_lrs(*optimizer_, scheduled_, factor);
}

void Schedule::after_step(int64_t steps) {
  if (per_step_) {
    set_group_lrs(*optimizer_, scheduled_);  // the scheduler continues from its own rates
    scheduler_->step();
    scheduled_ = group_lrs(*optimizer_);
  }
  steps_ = steps;
  apply_warmup(steps);
}

void Schedule::after_epoch(double test_loss) {
  if (per_step_ || (!scheduler_ && !plateau_)) return;
  set_group_lrs(*optimizer_, scheduled_);
  if (scheduler_) scheduler_->step();
  if (plateau_) plateau_->step(test_loss);
  scheduled_ = group_lrs(*optimizer_);
  apply_warmup(steps_);
}

nlohmann::json Schedule::state() const {
  nlohmann::json j = {{"lr_scheduler", scheduler_ ? lr_scheduler_json(*scheduler_) : nlohmann::json()},
                      {"scheduled_lrs", scheduled_},
                      {"steps", steps_}};
  if (plateau_) {
    const optim::ReduceLROnPlateauState s = plateau_->state_dict();
    j["plateau"] = {{"best", number(s.best)}, {"num_bad_epochs", s.num_bad_epochs},
                    {"cooldown_counter", s.cooldown_counter}, {"last_epoch", s.last_epoch}};
  }
  return j;
}

void Schedule::load_state(const nlohmann::json& j, const std::string& where) {
  const std::string here = where + "scheduler: ";
  try {
    if (j.is_null() || j.contains("last_epoch")) {  // an older checkpoint: the LRScheduler's state alone
      COHORT_CHECK(!plateau_ && warmup_steps_ == 0 && (scheduler_ == nullptr) == j.is_null(), here,
                   "the checkpoint holds no state for this run's schedule");
      if (scheduler_) scheduler_->load_state_dict(lr_scheduler_state(j, here));
      scheduled_ = group_lrs(*optimizer_);
      return;
    }
    const nlohmann::json& lr = j.at("lr_scheduler");
    COHORT_CHECK(lr.is_null() == (scheduler_ == nullptr) && j.contains("plateau") == (plateau_ != nullptr), here,
                 "the checkpoint holds the state of another schedule");
    if (scheduler_) scheduler_->load_state_dict(lr_scheduler_state(lr, here));
    if (plateau_) {
      const nlohmann::json& p = j.at("plateau");
      optim::ReduceLROnPlateauState s;
      s.best = number_from(p.at("best"));
      s.num_bad_epochs = static_cast<int>(integer_at(p, "num_bad_epochs", here));
      s.cooldown_counter = static_cast<int>(integer_at(p, "cooldown_counter", here));
      s.last_epoch = integer_at(p, "last_epoch", here);
      plateau_->load_state_dict(s);
    }
    std::vector<double> scheduled = j.at("scheduled_lrs").get<std::vector<double>>();
    COHORT_CHECK(scheduled.size() == optimizer_->param_groups().size(), here, "scheduled_lrs has ", scheduled.size(),
                 " rates for ", optimizer_->param_groups().size(), " parameter groups");
    scheduled_ = std::move(scheduled);
    steps_ = integer_at(j, "steps", here);
  } catch (const nlohmann::json::exception& e) {
    throw Error(here + escape_text(e.what()));
  }
}

}  // namespace cohort::app
