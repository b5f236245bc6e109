// Attaching nodes to op outputs, and the autograd methods of Tensor.
#include "cohort/autograd/record.h"

#include <mutex>

#include "autograd/function_node.h"
#include "autograd/meta.h"
#include "cohort/autograd/trace.h"
#include "cohort/autograd/engine.h"
#include "cohort/ops/shape.h"

namespace cohort {

namespace autograd {

bool needs_grad(std::initializer_list<Tensor> inputs) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor& t : inputs)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

bool needs_grad(const std::vector<Tensor>& inputs) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor& t : inputs)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

std::shared_ptr<Node> gradient_edge(const Tensor& t) {
  AutogradMeta* meta = t.unsafe_impl()->autograd_meta();
  if (!meta) return nullptr;
  if (meta->grad_fn) return meta->grad_fn;
  if (!meta->requires_grad) return nullptr;
  // Two threads may ask for the same leaf's accumulator (replicas sharing a parameter).
  static std::mutex m;
  std::lock_guard<std::mutex> l(m);
  std::shared_ptr<Node> acc = meta->grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t.impl());
    meta->grad_accumulator = acc;
  }
  return acc;
}

Tensor attach(const char* name, Tensor out, const std::vector<Tensor>& inputs, BackwardFn fn) {
  trace::on_autograd_node(name);  // Note [Tracing ops]: an op that does not report is an error while tracing
  std::vector<std::shared_ptr<Node>> next;
  std::vector<Shape> sizes;
  next.reserve(inputs.size());
  sizes.reserve(inputs.size());
  for (const Tensor& in : inputs) {
    bool tracked = in.defined() && in.requires_grad();
    next.push_back(tracked ? gradient_edge(in) : nullptr);
    sizes.push_back(tracked ? in.sizes().vec() : Shape());
  }
  auto node = std::make_shared<FunctionNode>(name, std::move(next), out.device(), std::move(fn), std::move(sizes));
  AutogradMeta& meta = out.unsafe_impl()->ensure_autograd_meta();
  COHORT_ASSERT(!meta.grad_fn);
  meta.requires_grad = true;
  meta.grad_fn = std::move(node);
  return out;
}

}  // namespace autograd

using autograd::AutogradMeta;

bool Tensor::requires_grad() const {
  AutogradMeta* meta = checked().autograd_meta();
  return meta && (meta->requires_grad || meta->grad_fn);
}

const Tensor& Tensor::requires_grad_(bool requires_grad) const {
  AutogradMeta* meta = checked().autograd_meta();
  if (!requires_grad && meta && meta->grad_fn)
    throw AutogradError(detail::str("requires_grad_: cannot turn off requires_grad of a non-leaf tensor (",
                                    meta->grad_fn->name(), "); hint: use detach()"));
  if (requires_grad)
    COHORT_CHECK_AS(TypeError, is_floating_point(), "requires_grad_: only floating-point tensors can require "
                    "gradients, got ", dtype());
  if (requires_grad || meta) impl_->ensure_autograd_meta().requires_grad = requires_grad;
  return *this;
}

const Tensor& Tensor::grad() const {
  static const Tensor undefined;
  AutogradMeta* meta = checked().autograd_meta();
  return meta ? meta->grad : undefined;
}

Tensor& Tensor::mutable_grad() const { return impl_->ensure_autograd_meta().grad; }

std::shared_ptr<autograd::Node> Tensor::grad_fn() const {
  AutogradMeta* meta = checked().autograd_meta();
  return meta ? meta->grad_fn : nullptr;
}

bool Tensor::is_leaf() const { return grad_fn() == nullptr; }

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph) const {
  autograd::backward({*this}, {gradient}, retain_graph, create_graph);
}

Tensor Tensor::detach() const {
  const TensorImpl& self = checked();
  auto impl = std::make_shared<TensorImpl>(self.storage(), self.dtype(), self.sizes().vec(), self.strides().vec(),
                                           self.offset());
  return Tensor(std::move(impl));
}

const Tensor& Tensor::detach_() const {
  if (AutogradMeta* meta = checked().autograd_meta()) {
    meta->grad_fn = nullptr;
    meta->requires_grad = false;
  }
  return *this;
}

void Tensor::retain_grad() const {
  AutogradMeta* meta = checked().autograd_meta();
  COHORT_CHECK_AS(AutogradError, requires_grad(), "retain_grad: the tensor does not require grad");
  if (!meta->grad_fn || meta->retains_grad) return;  // leaves keep their grad anyway
  meta->retains_grad = true;
  std::weak_ptr<TensorImpl> weak = impl_;
  meta->retain_hook = meta->grad_fn->add_pre_hook([weak](const Tensor& g) {
    if (auto impl = weak.lock()) {
      Tensor& grad = impl->ensure_autograd_meta().grad;
      grad = grad.defined() ? grad + g : cohort::clone(g);
    }
    return Tensor();
  });
}

bool Tensor::retains_grad() const {
  AutogradMeta* meta = checked().autograd_meta();
  return meta && meta->retains_grad;
}

unsigned Tensor::register_hook(Hook hook) const {
  COHORT_CHECK_AS(AutogradError, requires_grad(), "register_hook: cannot register a hook on a tensor that "
                  "does not require grad");
  AutogradMeta& meta = impl_->ensure_autograd_meta();
  if (meta.grad_fn) return meta.grad_fn->add_pre_hook(std::move(hook));
  meta.leaf_hooks.emplace_back(meta.next_hook_id, std::move(hook));
  return meta.next_hook_id++;
}

unsigned Tensor::register_post_accumulate_grad_hook(PostAccumulateGradHook hook) const {
  COHORT_CHECK_AS(AutogradError, requires_grad() && is_leaf(), "register_post_accumulate_grad_hook: the tensor ",
                  requires_grad() ? "is not a leaf" : "does not require grad",
                  "; hint: register it on a parameter (a leaf that requires grad)");
  AutogradMeta& meta = impl_->ensure_autograd_meta();
  meta.post_accumulate_hooks.emplace_back(meta.next_hook_id, std::move(hook));
  return meta.next_hook_id++;
}

void Tensor::remove_hook(unsigned handle) const {
  AutogradMeta* meta = checked().autograd_meta();
  if (!meta) return;
  if (meta->grad_fn) return meta->grad_fn->remove_pre_hook(handle);
  std::erase_if(meta->leaf_hooks, [handle](const auto& h) { return h.first == handle; });
  std::erase_if(meta->post_accumulate_hooks, [handle](const auto& h) { return h.first == handle; });
}

}  // namespace cohort
