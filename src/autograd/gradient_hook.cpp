// One node over several tensors' gradients (see cohort/autograd/gradient_hook.h).
#include "cohort/autograd/gradient_hook.h"

#include <mutex>

#include "autograd/meta.h"
#include "autograd/output_relay.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"

namespace cohort::autograd {

namespace {

// Note [Gradient hook node]
// Each alias k gets an OutputRelay (output_relay.h) as grad_fn, whose only edge is the hook node. The
// engine runs the hook node once every relay that received a gradient has run (a relay of an alias
// nothing used is not part of the pass), so the hook sees all the gradients of the pass at once, as
// PyTorch's multi-output node does. Its edges are the tensors' own gradient edges.
class GradientHookNode : public Node {
 public:
  GradientHookNode(std::string name, std::vector<std::shared_ptr<Node>> next, Device device, GradientsHook hook,
                   std::vector<Shape> shapes)
      : Node(std::move(name), std::move(next), device), hook_(std::move(hook)), shapes_(std::move(shapes)),
        slots_(shapes_.size()) {}

  void deliver(size_t index, Tensor grad) {
    std::lock_guard<std::mutex> l(mutex_);
    slots_[index] = std::move(grad);
  }

  std::vector<Tensor> apply(Tensor) override {
    std::vector<Tensor> grads;
    {
      std::lock_guard<std::mutex> l(mutex_);
      grads.swap(slots_);
      slots_.resize(shapes_.size());
    }
    std::vector<Tensor> replaced = hook_(grads);
    if (replaced.empty()) return grads;
    if (replaced.size() != grads.size())
      throw AutogradError(cohort::detail::str(name(), ": the hook returned ", replaced.size(), " gradients for ",
                                              grads.size(), " tensors; hint: return one per tensor (an undefined "
                                              "Tensor() for none), or an empty vector to keep them"));
    for (size_t i = 0; i < replaced.size(); ++i) {
      if (!replaced[i].defined()) continue;
      if (!next_functions()[i])
        throw AutogradError(cohort::detail::str(name(), ": the hook returned a gradient for tensor ", i,
                                                ", which does not require grad; hint: return an undefined "
                                                "Tensor() there"));
      if (replaced[i].sizes() != IntArrayRef(shapes_[i]))
        throw AutogradError(cohort::detail::str(name(), ": the hook returned a gradient of shape ", replaced[i].sizes(),
                                                " for tensor ", i, ", which has shape ", IntArrayRef(shapes_[i])));
    }
    return replaced;
  }

 private:
  GradientsHook hook_;
  std::vector<Shape> shapes_;  // the tensors' shapes, for the checks
  std::mutex mutex_;
  std::vector<Tensor> slots_;
};

using GradientRelay = detail::OutputRelay<GradientHookNode>;

}  // namespace

std::vector<Tensor> hook_gradients(const std::vector<Tensor>& tensors, GradientsHook hook, const char* name) {
  COHORT_CHECK(hook, "hook_gradients: the hook is empty");
  bool any = false;
  for (const Tensor& t : tensors) any = any || (t.defined() && t.requires_grad());
  if (!any || !GradMode::is_enabled()) return tensors;
  std::vector<std::shared_ptr<Node>> next;
  std::vector<Shape> shapes;
  Device device;
  bool device_set = false;
  for (const Tensor& t : tensors) {
    const bool tracked = t.defined() && t.requires_grad();
    next.push_back(tracked ? gradient_edge(t) : nullptr);
    shapes.push_back(t.defined() ? t.sizes().vec() : Shape{});
    if (tracked && !device_set) device = t.device(), device_set = true;
  }
  auto node = std::make_shared<GradientHookNode>(name, std::move(next), device, std::move(hook), std::move(shapes));
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (!t.defined() || !t.requires_grad()) {
      out.push_back(t);
      continue;
    }
    Tensor alias = t.detach();
    AutogradMeta& meta = alias.unsafe_impl()->ensure_autograd_meta();
    meta.requires_grad = true;
    meta.grad_fn = std::make_shared<GradientRelay>(node, i);
    out.push_back(std::move(alias));
  }
  return out;
}

}  // namespace cohort::autograd
