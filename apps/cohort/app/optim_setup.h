// The optimizers and learning-rate schedules of `cohort train --optimizer/--scheduler`.
#pragma once

#include <memory>
#include <vector>

#include "cohort/core/tensor.h"
#include "cohort/optim/lr_scheduler.h"
#include "cohort/optim/optimizer.h"

#include "app/config.h"

namespace cohort::app {

// sgd (with --momentum, --weight-decay), adam, adamw, rmsprop (with --momentum).
std::unique_ptr<optim::Optimizer> make_optimizer(const TrainConfig& config, std::vector<Tensor> parameters);

// A schedule and when it steps.
struct Schedule {
  std::unique_ptr<optim::LRScheduler> scheduler;  // null for "none"
  bool per_step = false;                          // step after every batch (else after every epoch)
};

// none; step (lr x0.1 at 1/2 and 3/4 of the epochs); cosine (to 0 over the epochs);
// onecycle (warm-up to --lr over the first 30% of the steps, then down; steps every batch).
Schedule make_schedule(const TrainConfig& config, optim::Optimizer& optimizer, int64_t steps_per_epoch);

}  // namespace cohort::app
