// A module's forward and backward hooks, and the call that runs them (see cohort/nn/module.h).
#include <memory>

#include "cohort/autograd/grad_mode.h"
#include "cohort/autograd/gradient_hook.h"
#include "cohort/nn/module.h"

namespace cohort::nn {

unsigned Module::register_forward_pre_hook(PreHook hook) {
  pre_hooks_.emplace_back(next_hook_, std::move(hook));
  return next_hook_++;
}

unsigned Module::register_forward_hook(PostHook hook) {
  post_hooks_.emplace_back(next_hook_, std::move(hook));
  return next_hook_++;
}

unsigned Module::register_full_backward_pre_hook(BackwardPreHook hook) {
  backward_pre_hooks_.emplace_back(next_hook_, std::move(hook));
  return next_hook_++;
}

unsigned Module::register_full_backward_hook(BackwardHook hook) {
  backward_hooks_.emplace_back(next_hook_, std::move(hook));
  return next_hook_++;
}

void Module::remove_hook(unsigned handle) {
  auto same = [handle](const auto& h) { return h.first == handle; };
  std::erase_if(pre_hooks_, same);
  std::erase_if(post_hooks_, same);
  std::erase_if(backward_pre_hooks_, same);
  std::erase_if(backward_hooks_, same);
}

namespace {

// Note [Module backward hooks]
// As PyTorch's BackwardHook: the inputs that require grad pass through one autograd::hook_gradients
// node before forward, and the output through another after the forward hooks. In backward the
// output's node runs first: it gives grad_output to the pre-hooks (which may replace it) and keeps
// it; the inputs' node runs once the gradients w.r.t. the inputs are computed and gives them, with
// the kept grad_output, to the hooks (which may replace them). Without an input that requires grad
// the hooks run in the output's node, with grad_input all undefined. The hooks are the ones
// registered when forward ran; a module destroyed before backward runs no hook.
struct BackwardCall {
  std::weak_ptr<Module> module;
  std::vector<std::pair<unsigned, Module::BackwardPreHook>> pre_hooks;
  std::vector<std::pair<unsigned, Module::BackwardHook>> hooks;
  size_t inputs = 0;
  std::vector<Tensor> grad_output;

  // The hooks on grad_input; {} to keep it.
  std::vector<Tensor> run_hooks(Module& m, const std::vector<Tensor>& grad_input) const {
    std::vector<Tensor> current = grad_input;
    bool changed = false;
    for (auto& [id, hook] : hooks) {
      std::vector<Tensor> replaced = hook(m, current, grad_output);
      if (!replaced.empty()) current = std::move(replaced), changed = true;
    }
    return changed ? current : std::vector<Tensor>{};
  }
};

}  // namespace

Tensor Module::call_with_hooks(const std::vector<Tensor>& inputs,
                               const std::function<Tensor(const std::vector<Tensor>&)>& f) {
  for (auto& [id, hook] : pre_hooks_) hook(*this, inputs);
  const bool backward_hooks = (!backward_hooks_.empty() || !backward_pre_hooks_.empty()) && GradMode::is_enabled();
  std::shared_ptr<BackwardCall> call;
  std::vector<Tensor> args = inputs;
  bool input_node = false;
  if (backward_hooks) {
    call = std::make_shared<BackwardCall>(
        BackwardCall{weak_from_this(), backward_pre_hooks_, backward_hooks_, inputs.size(), {}});
    for (const Tensor& t : inputs) input_node = input_node || (t.defined() && t.requires_grad());
    if (input_node && !call->hooks.empty())
      args = autograd::hook_gradients(inputs, [call](const std::vector<Tensor>& grad_input) {
        auto m = call->module.lock();
        return m ? call->run_hooks(*m, grad_input) : std::vector<Tensor>{};
      });
  }
  Tensor out = f(args);
  for (auto& [id, hook] : post_hooks_) {
    Tensor replaced = hook(*this, inputs, out);
    if (replaced.defined()) out = std::move(replaced);
  }
  if (call && out.defined() && out.requires_grad()) {
    out = autograd::hook_gradients({out}, [call, input_node](const std::vector<Tensor>& grads) {
      auto m = call->module.lock();
      if (!m) return std::vector<Tensor>{};
      std::vector<Tensor> grad_output = grads;
      bool changed = false;
      for (auto& [id, hook] : call->pre_hooks) {
        std::vector<Tensor> replaced = hook(*m, grad_output);
        if (!replaced.empty()) grad_output = std::move(replaced), changed = true;
      }
      call->grad_output = grad_output;
      if (!input_node) call->run_hooks(*m, std::vector<Tensor>(call->inputs));
      return changed ? grad_output : std::vector<Tensor>{};
    })[0];
  }
  return out;
}

}  // namespace cohort::nn
