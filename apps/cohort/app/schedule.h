// The learning-rate schedule of `cohort train`: --scheduler, with --warmup-steps in front of it.
//
// Note [Warm-up]
// During the first N steps (--warmup-steps), step k (from 0) runs at (k + 1) / N of the rate the
// scheduler sets, then at the scheduler's rate. The scheduler runs as if there were no warm-up: the
// schedule keeps the rates it set and hands the optimizer their warmed-up fraction, so recursive
// schedulers (cosine, step, plateau's reductions) see their own rates and closed-form ones (onecycle,
// cosine-restarts) are unaffected. For the per-epoch schedulers this is exactly PyTorch's recipe of
// LinearLR(start_factor=1/N, total_iters=N-1) stepped every batch beside the scheduler stepped every
// epoch (both multiply the lr they find); the fixtures check that.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "cohort/optim/lr_scheduler.h"
#include "cohort/optim/optimizer.h"
#include "cohort/optim/reduce_on_plateau_scheduler.h"

#include "app/config.h"

namespace cohort::app {

class Schedule {
 public:
  // none; step (lr x0.1 at 1/2 and 3/4 of the epochs); cosine (to 0 over the epochs); onecycle
  // (warm-up to --lr over the first 30% of the steps, then down); plateau (x0.1 when the test loss has
  // not improved for 2 epochs, PyTorch's ReduceLROnPlateau(factor=0.1, patience=2)); cosine-restarts
  // (SGDR: cosine to 0 over a period, then back to --lr; periods of 1, 2, 4, ... epochs). onecycle and
  // cosine-restarts step every optimizer step, the others every epoch. Sets the optimizer's lr for the
  // first step.
  Schedule(const TrainConfig& config, optim::Optimizer& optimizer, int64_t steps_per_epoch);
  Schedule(Schedule&&) = default;

  // After an optimizer step; `steps` counts the steps done, that one included.
  void after_step(int64_t steps);
  // After an epoch's evaluation, with its test loss (which plateau follows).
  void after_epoch(double test_loss);

  // What a checkpoint keeps: the scheduler's state and the rates it set (Note [Warm-up]); restored
  // over a schedule built with the same config and optimizer, whose own state holds the current lrs.
  // `load_state` accepts the "scheduler" of older checkpoints (a bare LRScheduler state or null),
  // and throws a cohort::Error starting with `where` for a malformed one.
  nlohmann::json state() const;
  void load_state(const nlohmann::json& state, const std::string& where);

 private:
  void apply_warmup(int64_t steps_done);

  optim::Optimizer* optimizer_;
  std::unique_ptr<optim::LRScheduler> scheduler_;
  std::unique_ptr<optim::ReduceLROnPlateauScheduler> plateau_;
  bool per_step_ = false;
  int64_t warmup_steps_ = 0;
  int64_t steps_ = 0;              // optimizer steps done
  std::vector<double> scheduled_;  // each group's lr as the scheduler set it
};

}  // namespace cohort::app
