// Schedulers made of schedulers, PyTorch's SequentialLR and ChainedScheduler:
//   SequentialLR: scheduler i drives the lr from milestone i - 1 to milestone i, each starting afresh
//   at its milestone (from the initial lr: StepLR, MultiStepLR, ExponentialLR, CosineAnnealingLR,
//   LinearLR, LambdaLR, CosineAnnealingWarmRestarts, OneCycleLR; MultiplicativeLR multiplies the lr
//   it finds by lr_lambda(0), as PyTorch 2.x does).
//   ChainedScheduler: every step steps each scheduler in turn, so their factors compose.
//
//   auto warmup = std::make_shared<optim::LinearLR>(opt, 0.1, 1.0, 5);
//   auto cosine = std::make_shared<optim::CosineAnnealingLR>(opt, 95);
//   optim::SequentialLR sched(opt, {warmup, cosine}, {5});
//
// Build the schedulers in the order listed, on an optimizer no other scheduler has touched: PyTorch
// keeps each group's lr from before its first scheduler ("initial_lr"); cohort takes it from the first
// listed scheduler's base lrs and gives it to the others, then replays what PyTorch's constructors do.
// These are not LRSchedulers themselves (so they do not nest). Throws on no schedulers, a null one,
// or milestones that are not one fewer than the schedulers.
#pragma once

#include <memory>

#include "cohort/optim/lr_scheduler.h"

namespace cohort::optim {

struct SequentialLRState {
  int64_t last_epoch = 0;
  std::vector<LRSchedulerState> schedulers;
};

class SequentialLR {
 public:
  SequentialLR(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers,
               std::vector<int64_t> milestones);

  void step();
  const std::vector<double>& get_last_lr() const { return last_lrs_; }
  int64_t last_epoch() const { return last_epoch_; }

  SequentialLRState state_dict() const;
  // Throws if the state holds another number of schedulers.
  void load_state_dict(const SequentialLRState& state);

 private:
  Optimizer& optimizer_;
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<int64_t> milestones_;
  int64_t last_epoch_ = 0;
  std::vector<double> last_lrs_;
};

class ChainedScheduler {
 public:
  ChainedScheduler(Optimizer& optimizer, std::vector<std::shared_ptr<LRScheduler>> schedulers);

  void step();
  const std::vector<double>& get_last_lr() const { return last_lrs_; }

  std::vector<LRSchedulerState> state_dict() const;
  // Throws if the state holds another number of schedulers.
  void load_state_dict(const std::vector<LRSchedulerState>& state);

 private:
  Optimizer& optimizer_;
  std::vector<std::shared_ptr<LRScheduler>> schedulers_;
  std::vector<double> last_lrs_;
};

}  // namespace cohort::optim
