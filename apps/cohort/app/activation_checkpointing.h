// `cohort train --checkpoint-activations`: the models that recompute activations in backward instead
// of keeping them (utils::checkpoint), ResNets by block and char-transformer by residual step.
#pragma once

#include <string>
#include <vector>

#include "cohort/models/model.h"

namespace cohort::app {

// The --model names that support --checkpoint-activations.
const std::vector<std::string>& models_with_checkpoint_activations();

// Turns checkpointing on in `model` (kept by its clones, so by DataParallel's replicas). Throws a
// UsageError naming the model and the ones that support it.
void enable_checkpoint_activations(models::Model& model);

}  // namespace cohort::app
