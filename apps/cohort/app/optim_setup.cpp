// Optimizer and schedule factories for the trainer.
#include "app/optim_setup.h"

#include <algorithm>

#include "cohort/core/error.h"
#include "cohort/optim/adam.h"
#include "cohort/optim/rmsprop.h"
#include "cohort/optim/sgd.h"

namespace cohort::app {

std::unique_ptr<optim::Optimizer> make_optimizer(const TrainConfig& c, std::vector<Tensor> parameters) {
  if (c.optimizer == "sgd")
    return std::make_unique<optim::SGD>(std::move(parameters),
                                        optim::SGDOptions(c.lr).momentum(c.momentum).weight_decay(c.weight_decay));
  if (c.optimizer == "adam")
    return std::make_unique<optim::Adam>(std::move(parameters), optim::AdamOptions(c.lr).weight_decay(c.weight_decay));
  if (c.optimizer == "adamw")
    return std::make_unique<optim::AdamW>(std::move(parameters),
                                          optim::AdamWOptions(c.lr).weight_decay(c.weight_decay));
  if (c.optimizer == "rmsprop")
    return std::make_unique<optim::RMSprop>(
        std::move(parameters), optim::RMSpropOptions(c.lr).momentum(c.momentum).weight_decay(c.weight_decay));
  throw Error("cohort train: --optimizer '" + c.optimizer + "' is not known");
}

Schedule make_schedule(const TrainConfig& c, optim::Optimizer& optimizer, int64_t steps_per_epoch) {
  Schedule s;
  if (c.scheduler == "step") {
    std::vector<int64_t> milestones{std::max<int64_t>(1, c.epochs / 2), std::max<int64_t>(1, c.epochs * 3 / 4)};
    milestones.erase(std::unique(milestones.begin(), milestones.end()), milestones.end());
    s.scheduler = std::make_unique<optim::MultiStepLR>(optimizer, milestones, 0.1);
  } else if (c.scheduler == "cosine") {
    s.scheduler = std::make_unique<optim::CosineAnnealingLR>(optimizer, c.epochs);
  } else if (c.scheduler == "onecycle") {
    s.scheduler = std::make_unique<optim::OneCycleLR>(
        optimizer, optim::OneCycleLROptions(c.lr, c.epochs * steps_per_epoch));
    s.per_step = true;
  } else if (c.scheduler != "none") {
    throw Error("cohort train: --scheduler '" + c.scheduler + "' is not known");
  }
  return s;
}

}  // namespace cohort::app
