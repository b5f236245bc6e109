// ReduceLROnPlateauScheduler: PyTorch's ReduceLROnPlateau.step, comparison for comparison.
#include "cohort/optim/reduce_on_plateau_scheduler.h"

#include <algorithm>
#include <limits>

#include "cohort/core/error.h"

namespace cohort::optim {

ReduceLROnPlateauScheduler::ReduceLROnPlateauScheduler(Optimizer& optimizer, SchedulerMode mode, double factor,
                                                       int patience, double threshold, ThresholdMode threshold_mode,
                                                       int cooldown, const std::vector<double>& min_lr, double eps,
                                                       bool /*verbose*/)
    : optimizer_(optimizer),
      mode_(mode),
      factor_(factor),
      patience_(patience),
      threshold_(threshold),
      threshold_mode_(threshold_mode),
      cooldown_(cooldown),
      eps_(eps),
      best_(mode == min ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity()) {
  const char* name = "ReduceLROnPlateauScheduler";
  COHORT_CHECK(factor >= 0 && factor < 1, name, ": factor must be in [0, 1) (the lr is multiplied by it), got ",
               factor);
  COHORT_CHECK(patience >= 0, name, ": patience must be non-negative, got ", patience);
  COHORT_CHECK(threshold >= 0, name, ": threshold must be non-negative, got ", threshold);
  COHORT_CHECK(cooldown >= 0, name, ": cooldown must be non-negative, got ", cooldown);
  COHORT_CHECK(eps >= 0, name, ": eps must be non-negative, got ", eps);
  const size_t groups = optimizer.param_groups().size();
  COHORT_CHECK(min_lr.size() <= 1 || min_lr.size() == groups, name, ": expected 1 or ", groups,
               " values for min_lr (one per parameter group), got ", min_lr.size());
  min_lrs_ = min_lr.size() == groups ? min_lr : std::vector<double>(groups, min_lr.empty() ? 0.0 : min_lr[0]);
}

std::vector<double> ReduceLROnPlateauScheduler::get_last_lr() const {
  std::vector<double> lrs;
  for (const auto& group : optimizer_.param_groups()) lrs.push_back(group.options().get_lr());
  return lrs;
}

ReduceLROnPlateauState ReduceLROnPlateauScheduler::state_dict() const {
  return {.best = best_, .num_bad_epochs = num_bad_epochs_, .cooldown_counter = cooldown_counter_,
          .last_epoch = last_epoch_};
}

void ReduceLROnPlateauScheduler::load_state_dict(const ReduceLROnPlateauState& state) {
  COHORT_CHECK(state.num_bad_epochs >= 0 && state.cooldown_counter >= 0 && state.last_epoch >= 0,
               "ReduceLROnPlateauScheduler::load_state_dict: the counts must be non-negative, got num_bad_epochs ",
               state.num_bad_epochs, ", cooldown_counter ", state.cooldown_counter, ", last_epoch ", state.last_epoch);
  best_ = state.best;
  num_bad_epochs_ = state.num_bad_epochs;
  cooldown_counter_ = state.cooldown_counter;
  last_epoch_ = state.last_epoch;
}

bool ReduceLROnPlateauScheduler::is_better(double a) const {
  if (mode_ == min) return threshold_mode_ == rel ? a < best_ * (1. - threshold_) : a < best_ - threshold_;
  return threshold_mode_ == rel ? a > best_ * (threshold_ + 1.) : a > best_ + threshold_;
}

void ReduceLROnPlateauScheduler::step(double metric) {
  COHORT_CHECK(min_lrs_.size() == optimizer_.param_groups().size(), "ReduceLROnPlateauScheduler: the optimizer has ",
               optimizer_.param_groups().size(), " parameter groups, the scheduler was built for ", min_lrs_.size(),
               "; hint: build the scheduler after adding every group");
  ++last_epoch_;
  if (is_better(metric)) {
    best_ = metric;
    num_bad_epochs_ = 0;
  } else {
    ++num_bad_epochs_;
  }
  if (cooldown_counter_ > 0) {  // bad epochs during a cooldown do not count
    --cooldown_counter_;
    num_bad_epochs_ = 0;
  }
  if (num_bad_epochs_ > patience_) {
    reduce_lr();
    cooldown_counter_ = cooldown_;
    num_bad_epochs_ = 0;
  }
}

void ReduceLROnPlateauScheduler::reduce_lr() {
  auto& groups = optimizer_.param_groups();
  for (size_t i = 0; i < groups.size(); ++i) {
    const double old_lr = groups[i].options().get_lr();
    const double new_lr = std::max(old_lr * factor_, min_lrs_[i]);
    if (old_lr - new_lr > eps_) groups[i].options().set_lr(new_lr);
  }
}

}  // namespace cohort::optim
