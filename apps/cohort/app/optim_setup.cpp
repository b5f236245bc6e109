// The trainer's optimizer factory.
#include "app/optim_setup.h"

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

}  // namespace cohort::app
