// Learning-rate schedulers, with PyTorch 1.13's semantics and formulas so that trajectories match:
// constructing a scheduler performs its first step (epoch 0, which sets the initial lr), and each
// step() after an epoch (or batch) sets the lr of every parameter group for the next one.
//
//   optim::SGD opt(net->parameters(), optim::SGDOptions(0.1).momentum(0.9));
//   optim::StepLR scheduler(opt, /*step_size=*/30, /*gamma=*/0.1);
//   for (int epoch = 0; epoch < 90; ++epoch) { train(opt); scheduler.step(); }
//
// Note: libtorch's StepLR counts from its first step() call, one epoch later than PyTorch; cohort
// follows PyTorch. Schedulers that update recursively (StepLR, ExponentialLR, CosineAnnealingLR,
// LinearLR) read each group's current lr, so setting an lr by hand between steps carries over.
#pragma once

#include <cstdint>
#include <vector>

#include "cohort/optim/optimizer.h"

namespace cohort::optim {

// A scheduler's state for checkpoints: restore it into a scheduler built with the same arguments
// over the same optimizer (whose own state holds the current lrs).
struct LRSchedulerState {
  int64_t last_epoch = -1;
  int64_t step_count = 0;
  std::vector<double> base_lrs;
  std::vector<double> last_lrs;
};

class LRScheduler {
 public:
  LRScheduler(const LRScheduler&) = delete;
  LRScheduler& operator=(const LRScheduler&) = delete;
  virtual ~LRScheduler() = default;

  // Advances one epoch and sets every group's lr. Throws if the optimizer's group count changed.
  void step();
  // The lrs set by the last step, one per group.
  const std::vector<double>& get_last_lr() const { return last_lrs_; }
  int64_t last_epoch() const { return last_epoch_; }
  const std::vector<double>& base_lrs() const { return base_lrs_; }

  LRSchedulerState state_dict() const;
  // Throws if the state's group count differs from the optimizer's.
  void load_state_dict(const LRSchedulerState& state);

 protected:
  // base_lrs are the groups' current lrs.
  explicit LRScheduler(Optimizer& optimizer);
  // The lrs for last_epoch_ (already advanced), one per group.
  virtual std::vector<double> get_lrs() = 0;
  // PyTorch's _initial_step: every derived constructor calls it last.
  void initial_step();
  // Each group's current lr.
  std::vector<double> group_lrs() const;

  Optimizer& optimizer_;
  std::vector<double> base_lrs_;
  int64_t last_epoch_ = -1;
  int64_t step_count_ = 0;

 private:
  std::vector<double> last_lrs_;
};

// lr *= gamma every step_size epochs. Throws if step_size is 0.
class StepLR : public LRScheduler {
 public:
  StepLR(Optimizer& optimizer, unsigned step_size, double gamma = 0.1);

 private:
  std::vector<double> get_lrs() override;
  unsigned step_size_;
  double gamma_;
};

// lr *= gamma at each milestone epoch (gamma^k for a milestone listed k times).
class MultiStepLR : public LRScheduler {
 public:
  MultiStepLR(Optimizer& optimizer, std::vector<int64_t> milestones, double gamma = 0.1);

 private:
  std::vector<double> get_lrs() override;
  std::vector<int64_t> milestones_;
  double gamma_;
};

// lr *= gamma every epoch.
class ExponentialLR : public LRScheduler {
 public:
  ExponentialLR(Optimizer& optimizer, double gamma);

 private:
  std::vector<double> get_lrs() override;
  double gamma_;
};

// lr follows eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2, computed with
// PyTorch's recursive ("chainable") form; past T_max it rises again (period 2 T_max).
// Throws if T_max <= 0.
class CosineAnnealingLR : public LRScheduler {
 public:
  CosineAnnealingLR(Optimizer& optimizer, int64_t T_max, double eta_min = 0);

 private:
  std::vector<double> get_lrs() override;
  int64_t T_max_;
  double eta_min_;
};

// lr goes linearly from base_lr * start_factor to base_lr * end_factor over total_iters epochs.
// Throws unless 0 < start_factor <= 1, 0 <= end_factor <= 1 and total_iters > 0.
class LinearLR : public LRScheduler {
 public:
  LinearLR(Optimizer& optimizer, double start_factor = 1.0 / 3, double end_factor = 1.0, int64_t total_iters = 5);

 private:
  std::vector<double> get_lrs() override;
  double start_factor_;
  double end_factor_;
  int64_t total_iters_;
};

enum class AnnealStrategy { Cos, Linear };

// The 1cycle policy (Smith & Topin): lr rises from max_lr / div_factor to max_lr over pct_start of
// total_steps, then falls to max_lr / (div_factor * final_div_factor) (three_phase: falls back to
// the initial lr, then to the minimum). With cycle_momentum the momentum (SGD, RMSprop) or beta1
// (Adam, AdamW) moves the opposite way, between max_momentum and base_momentum.
struct OneCycleLROptions {
  OneCycleLROptions(double max_lr, int64_t total_steps) : max_lr_{max_lr}, total_steps_(total_steps) {}

  OneCycleLROptions& max_lr(double v) { max_lr_ = {v}; return *this; }
  // One per parameter group.
  OneCycleLROptions& max_lr(std::vector<double> v) { max_lr_ = std::move(v); return *this; }
  OneCycleLROptions& total_steps(int64_t v) { total_steps_ = v; return *this; }
  OneCycleLROptions& pct_start(double v) { pct_start_ = v; return *this; }
  OneCycleLROptions& anneal_strategy(AnnealStrategy v) { anneal_strategy_ = v; return *this; }
  OneCycleLROptions& cycle_momentum(bool v) { cycle_momentum_ = v; return *this; }
  OneCycleLROptions& base_momentum(double v) { base_momentum_ = v; return *this; }
  OneCycleLROptions& max_momentum(double v) { max_momentum_ = v; return *this; }
  OneCycleLROptions& div_factor(double v) { div_factor_ = v; return *this; }
  OneCycleLROptions& final_div_factor(double v) { final_div_factor_ = v; return *this; }
  OneCycleLROptions& three_phase(bool v) { three_phase_ = v; return *this; }
  const std::vector<double>& max_lr() const { return max_lr_; }
  int64_t total_steps() const { return total_steps_; }
  double pct_start() const { return pct_start_; }
  AnnealStrategy anneal_strategy() const { return anneal_strategy_; }
  bool cycle_momentum() const { return cycle_momentum_; }
  double base_momentum() const { return base_momentum_; }
  double max_momentum() const { return max_momentum_; }
  double div_factor() const { return div_factor_; }
  double final_div_factor() const { return final_div_factor_; }
  bool three_phase() const { return three_phase_; }

 private:
  std::vector<double> max_lr_;
  int64_t total_steps_;
  double pct_start_ = 0.3;
  AnnealStrategy anneal_strategy_ = AnnealStrategy::Cos;
  bool cycle_momentum_ = true;
  double base_momentum_ = 0.85;
  double max_momentum_ = 0.95;
  double div_factor_ = 25;
  double final_div_factor_ = 1e4;
  bool three_phase_ = false;
};

// Throws on total_steps <= 0, pct_start outside [0, 1], a max_lr list whose length is not the group
// count, cycle_momentum with an optimizer without momentum (Adagrad), and on stepping past
// total_steps.
class OneCycleLR : public LRScheduler {
 public:
  OneCycleLR(Optimizer& optimizer, const OneCycleLROptions& options);

 private:
  struct Phase {
    double end_step;
    int start_lr, end_lr;              // 0 initial, 1 max, 2 min
    int start_momentum, end_momentum;  // 0 max, 1 base
  };
  std::vector<double> get_lrs() override;
  double anneal(double start, double end, double pct) const;

  OneCycleLROptions options_;
  std::vector<Phase> phases_;
  std::vector<std::vector<double>> group_lrs_;  // per group: initial, max, min
};

}  // namespace cohort::optim
