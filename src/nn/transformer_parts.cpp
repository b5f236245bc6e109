// The transformer stacks' shared pieces.
#include "transformer_parts.h"

#include "cohort/ops/activation.h"
#include "cohort/ops/pointwise.h"

namespace cohort::nn::detail {

Tensor activate(const TransformerActivation& activation, const Tensor& x) {
  if (std::holds_alternative<enumtype::kReLU>(activation)) return relu(x);
  if (std::holds_alternative<enumtype::kGELU>(activation)) return gelu(x);
  return std::get<std::function<Tensor(const Tensor&)>>(activation)(x);
}

ModuleList stack_copies(Module& owner, const char* what, const std::shared_ptr<Module>& layer, int64_t num_layers) {
  COHORT_CHECK(layer != nullptr, what, ": the layer to stack is empty (nullptr)");
  COHORT_CHECK(num_layers > 0, what, ": num_layers must be positive, got ", num_layers);
  ModuleList layers = owner.register_module("layers", ModuleList());
  for (int64_t i = 0; i < num_layers; ++i) layers->push_back(layer->clone());
  return layers;
}

std::optional<AnyModule> copy_norm(Module& owner, const std::optional<AnyModule>& norm) {
  if (!norm) return std::nullopt;
  auto copy = norm->ptr()->clone();
  owner.register_module("norm", copy);
  return norm->rebound(copy);
}

}  // namespace cohort::nn::detail
