// Applying a recorded backward, and accumulating into a leaf's .grad().
#include "autograd/function_node.h"

#include "autograd/meta.h"
#include "cohort/ops/shape.h"

namespace cohort::autograd {

std::vector<Tensor> FunctionNode::apply(Tensor grad_output) {
  if (!fn_)
    throw AutogradError(detail::str(
        name(), ": trying to backward through the graph a second time (its saved tensors were freed after the "
        "first backward); hint: pass retain_graph=true to the first backward() if you need to call it twice"));
  std::vector<Tensor> grads = fn_(grad_output);
  COHORT_ASSERT(grads.size() == next_functions().size());
  for (size_t i = 0; i < grads.size(); ++i)
    if (grads[i].defined() && next_functions()[i] && grads[i].sizes() != IntArrayRef(input_sizes_[i]))
      throw AutogradError(detail::str(name(), " returned a gradient of shape ", grads[i].sizes(), " for input ", i,
                                      ", which has shape ", IntArrayRef(input_sizes_[i]), "; this is a bug in that op's backward"));
  return grads;
}

AccumulateGrad::AccumulateGrad(std::shared_ptr<TensorImpl> variable)
    : Node("AccumulateGrad", {}, variable->device()), variable_(std::move(variable)) {}

std::vector<Tensor> AccumulateGrad::apply(Tensor grad_output) {
  Tensor grad = std::move(grad_output);
  AutogradMeta& meta = variable_->ensure_autograd_meta();
  for (const auto& [id, hook] : meta.leaf_hooks) {
    Tensor replaced = hook(grad);
    if (replaced.defined()) grad = std::move(replaced);
  }
  COHORT_CHECK(grad.sizes() == variable_->sizes(), "AccumulateGrad: the gradient has shape ", grad.sizes(),
               " but the tensor it is for has shape ", variable_->sizes());
  if (grad.dtype() != variable_->dtype() || grad.device() != variable_->device())
    grad = grad.to(TensorOptions(variable_->dtype()).device(variable_->device()));
  if (!meta.grad.defined()) {
    // Keep the incoming buffer when nothing else can see it; else copy (e.g. an expanded view).
    bool exclusive = grad.impl().use_count() == 1 && grad.unsafe_impl()->storage().use_count() == 1 &&
                     grad.is_contiguous() && !GradMode::is_enabled();
    meta.grad = exclusive ? grad : clone(grad);
  } else if (GradMode::is_enabled()) {
    meta.grad = meta.grad + grad;
  } else {
    meta.grad.add_(grad);
  }
  if (!meta.post_accumulate_hooks.empty()) {
    Tensor self(variable_);
    for (const auto& [id, hook] : meta.post_accumulate_hooks) hook(self);
  }
  return {};
}

}  // namespace cohort::autograd
