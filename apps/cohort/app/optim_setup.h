// The optimizers of `cohort train --optimizer` (the schedules are schedule.h's).
#pragma once

#include <memory>
#include <vector>

#include "cohort/core/tensor.h"
#include "cohort/optim/optimizer.h"

#include "app/config.h"

namespace cohort::app {

// sgd (with --momentum, --weight-decay), adam, adamw, rmsprop (with --momentum).
std::unique_ptr<optim::Optimizer> make_optimizer(const TrainConfig& config, std::vector<Tensor> parameters);

}  // namespace cohort::app
