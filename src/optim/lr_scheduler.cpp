// Learning-rate schedulers: PyTorch 1.13's get_lr formulas, term for term in the same order, so
// that float64 trajectories agree to the last bits.
#include "cohort/optim/lr_scheduler.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "cohort/core/error.h"

namespace cohort::optim {

LRScheduler::LRScheduler(Optimizer& optimizer) : optimizer_(optimizer), base_lrs_(group_lrs()) {}

std::vector<double> LRScheduler::group_lrs() const {
  std::vector<double> lrs;
  for (const auto& group : optimizer_.param_groups()) lrs.push_back(group.options().get_lr());
  return lrs;
}

void LRScheduler::initial_step() {
  step_count_ = 0;
  step();
}

void LRScheduler::step() {
  COHORT_CHECK(base_lrs_.size() == optimizer_.param_groups().size(), "LRScheduler: the optimizer has ",
               optimizer_.param_groups().size(), " parameter groups, the scheduler was built for ", base_lrs_.size(),
               "; hint: build the scheduler after adding every group");
  ++step_count_;
  ++last_epoch_;
  std::vector<double> lrs = get_lrs();
  COHORT_ASSERT(lrs.size() == optimizer_.param_groups().size());
  for (size_t i = 0; i < lrs.size(); ++i) optimizer_.param_groups()[i].options().set_lr(lrs[i]);
  last_lrs_ = group_lrs();
}

LRSchedulerState LRScheduler::state_dict() const { return {last_epoch_, step_count_, base_lrs_, last_lrs_}; }

void LRScheduler::load_state_dict(const LRSchedulerState& state) {
  COHORT_CHECK(state.base_lrs.size() == base_lrs_.size() && state.last_lrs.size() == base_lrs_.size(),
               "LRScheduler: load_state_dict: the state is for ", state.base_lrs.size(),
               " parameter groups, this scheduler has ", base_lrs_.size());
  last_epoch_ = state.last_epoch;
  step_count_ = state.step_count;
  base_lrs_ = state.base_lrs;
  last_lrs_ = state.last_lrs;
}

// ---- StepLR, MultiStepLR, ExponentialLR ---------------------------------------------------------

StepLR::StepLR(Optimizer& optimizer, unsigned step_size, double gamma)
    : LRScheduler(optimizer), step_size_(step_size), gamma_(gamma) {
  COHORT_CHECK(step_size > 0, "StepLR: step_size must be positive, got ", step_size);
  initial_step();
}

std::vector<double> StepLR::get_lrs() {
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0 || last_epoch_ % step_size_ != 0) return lrs;
  for (double& lr : lrs) lr = lr * gamma_;
  return lrs;
}

MultiStepLR::MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma)
    : LRScheduler(optimizer), milestones_(std::move(milestones)), gamma_(gamma) {
  initial_step();
}

std::vector<double> MultiStepLR::get_lrs() {
  std::vector<double> lrs = group_lrs();
  auto count = std::count(milestones_.begin(), milestones_.end(), last_epoch_);
  if (count == 0) return lrs;
  for (double& lr : lrs) lr = lr * std::pow(gamma_, static_cast<double>(count));
  return lrs;
}

ExponentialLR::ExponentialLR(Optimizer& optimizer, double gamma) : LRScheduler(optimizer), gamma_(gamma) {
  initial_step();
}

std::vector<double> ExponentialLR::get_lrs() {
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0) return lrs;
  for (double& lr : lrs) lr = lr * gamma_;
  return lrs;
}

// ---- CosineAnnealingLR, LinearLR ----------------------------------------------------------------

CosineAnnealingLR::CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min)
    : LRScheduler(optimizer), T_max_(T_max), eta_min_(eta_min) {
  COHORT_CHECK(T_max > 0, "CosineAnnealingLR: T_max must be positive, got ", T_max);
  initial_step();
}

std::vector<double> CosineAnnealingLR::get_lrs() {
  constexpr double pi = std::numbers::pi;
  const double T = static_cast<double>(T_max_);
  const double e = static_cast<double>(last_epoch_);
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0) return lrs;
  for (size_t i = 0; i < lrs.size(); ++i) {
    if (step_count_ == 1 && last_epoch_ > 0)  // resumed at a later epoch: the closed form
      lrs[i] = eta_min_ + (base_lrs_[i] - eta_min_) * (1 + std::cos(e * pi / T)) / 2;
    else if ((last_epoch_ - 1 - T_max_) % (2 * T_max_) == 0)  // the minimum: restart the rise
      lrs[i] = lrs[i] + (base_lrs_[i] - eta_min_) * (1 - std::cos(pi / T)) / 2;
    else
      lrs[i] = (1 + std::cos(pi * e / T)) / (1 + std::cos(pi * (e - 1) / T)) * (lrs[i] - eta_min_) + eta_min_;
  }
  return lrs;
}

LinearLR::LinearLR(Optimizer& optimizer, double start_factor, double end_factor, int64_t total_iters)
    : LRScheduler(optimizer), start_factor_(start_factor), end_factor_(end_factor), total_iters_(total_iters) {
  COHORT_CHECK(start_factor > 0 && start_factor <= 1, "LinearLR: start_factor must be in (0, 1], got ", start_factor);
  COHORT_CHECK(end_factor >= 0 && end_factor <= 1, "LinearLR: end_factor must be in [0, 1], got ", end_factor);
  COHORT_CHECK(total_iters > 0, "LinearLR: total_iters must be positive, got ", total_iters);
  initial_step();
}

std::vector<double> LinearLR::get_lrs() {
  std::vector<double> lrs = group_lrs();
  if (last_epoch_ == 0) {
    for (double& lr : lrs) lr = lr * start_factor_;
    return lrs;
  }
  if (last_epoch_ > total_iters_) return lrs;
  const double delta = end_factor_ - start_factor_;
  for (double& lr : lrs)
    lr = lr * (1. + delta / (static_cast<double>(total_iters_) * start_factor_ +
                             static_cast<double>(last_epoch_ - 1) * delta));
  return lrs;
}

// ---- OneCycleLR ---------------------------------------------------------------------------------

OneCycleLR::OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& options)
    : LRScheduler(optimizer), options_(options) {
  const auto& o = options_;
  const size_t n = optimizer.param_groups().size();
  COHORT_CHECK(o.total_steps() > 0, "OneCycleLR: total_steps must be positive, got ", o.total_steps());
  COHORT_CHECK(o.pct_start() >= 0 && o.pct_start() <= 1, "OneCycleLR: pct_start must be in [0, 1], got ",
               o.pct_start());
  COHORT_CHECK(o.max_lr().size() == 1 || o.max_lr().size() == n, "OneCycleLR: expected 1 or ", n,
               " values for max_lr (one per parameter group), got ", o.max_lr().size());
  const double total = static_cast<double>(o.total_steps());
  if (o.three_phase()) {
    phases_ = {{o.pct_start() * total - 1, 0, 1, 0, 1},
               {2 * o.pct_start() * total - 2, 1, 0, 1, 0},
               {total - 1, 0, 2, 0, 0}};
  } else {
    phases_ = {{o.pct_start() * total - 1, 0, 1, 0, 1}, {total - 1, 1, 2, 1, 0}};
  }
  for (size_t i = 0; i < n; ++i) {
    const double max_lr = o.max_lr().size() == 1 ? o.max_lr()[0] : o.max_lr()[i];
    const double initial_lr = max_lr / o.div_factor();
    group_lrs_.push_back({initial_lr, max_lr, initial_lr / o.final_div_factor()});
    base_lrs_[i] = initial_lr;
  }
  if (o.cycle_momentum()) {
    COHORT_CHECK(optimizer.defaults().has_momentum(), "OneCycleLR: ", optimizer.name(),
                 " has no momentum to cycle; hint: set cycle_momentum(false)");
    for (auto& group : optimizer.param_groups()) group.options().set_momentum(o.max_momentum());
  }
  initial_step();
}

double OneCycleLR::anneal(double start, double end, double pct) const {
  if (options_.anneal_strategy() == AnnealStrategy::Linear) return (end - start) * pct + start;
  const double cos_out = std::cos(std::numbers::pi * pct) + 1;
  return end + (start - end) / 2.0 * cos_out;
}

std::vector<double> OneCycleLR::get_lrs() {
  COHORT_CHECK(last_epoch_ <= options_.total_steps(), "OneCycleLR: tried to step ", last_epoch_ + 1,
               " times, the schedule has ", options_.total_steps(), " total steps");
  const double momentums[2] = {options_.max_momentum(), options_.base_momentum()};
  const double step_num = static_cast<double>(last_epoch_);
  std::vector<double> lrs;
  for (size_t g = 0; g < optimizer_.param_groups().size(); ++g) {
    double start_step = 0;
    for (size_t i = 0; i < phases_.size(); ++i) {
      const Phase& phase = phases_[i];
      if (step_num <= phase.end_step || i + 1 == phases_.size()) {
        const double pct = (step_num - start_step) / (phase.end_step - start_step);
        lrs.push_back(anneal(group_lrs_[g][phase.start_lr], group_lrs_[g][phase.end_lr], pct));
        if (options_.cycle_momentum())
          optimizer_.param_groups()[g].options().set_momentum(
              anneal(momentums[phase.start_momentum], momentums[phase.end_momentum], pct));
        break;
      }
      start_step = phase.end_step;
    }
  }
  return lrs;
}

}  // namespace cohort::optim
