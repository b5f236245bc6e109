// What the transformer encoder, decoder and the whole Transformer share: the feed-forward activation
// and the stacks of layer copies with an optional final norm.
#pragma once

#include <optional>

#include "cohort/nn/container.h"
#include "cohort/nn/transformer_encoder.h"

namespace cohort::nn::detail {

Tensor activate(const TransformerActivation& activation, const Tensor& x);

// num_layers copies of layer (the same initial values, as PyTorch's deepcopy), registered in owner as
// "layers"; `what` names the owner in errors.
ModuleList stack_copies(Module& owner, const char* what, const std::shared_ptr<Module>& layer, int64_t num_layers);

// A copy of the final normalisation, registered in owner as "norm", or none.
std::optional<AnyModule> copy_norm(Module& owner, const std::optional<AnyModule>& norm);

}  // namespace cohort::nn::detail
