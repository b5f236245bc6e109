// A module's forward and backward hooks, and the call that runs them (see cohort/nn/module.h).
#include <memory>

#include "cohort/autograd/grad_mode.h"
#include "cohort/autograd/gradient_hook.h"
#include "cohort/nn/module.h"

namespace cohort::nn {

namespace {

// Adds `hook` to `hooks` under the module's next handle (one sequence for every kind of hook).
template <class Hook>
unsigned add_hook(std::vector<std::pair<unsigned, Hook>>& hooks, Hook hook, unsigned& next) {
  hooks.emplace_back(next, std::move(hook));
  return next++;
}

}  // namespace

unsigned Module::register_forward_pre_hook(PreHook hook) { return add_hook(pre_hooks_, std::move(hook), next_hook_); }
unsigned Module::register_forward_hook(PostHook hook) { return add_hook(post_hooks_, std::move(hook), next_hook_); }
unsigned Module::register_full_backward_pre_hook(BackwardPreHook hook) {
  return add_hook(backward_pre_hooks_, std::move(hook), next_hook_);
}
unsigned Module::register_full_backward_hook(BackwardHook hook) {
  return add_hook(backward_hooks_, std::move(hook), next_hook_);
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

  // The pre-hooks on grad_output, and the hooks on grad_input: the gradients the hooks left, or {} when
  // none replaced them.
  std::vector<Tensor> run_pre_hooks(Module& m, const std::vector<Tensor>& grads) const {
    return chain(pre_hooks, grads, [&](const auto& hook, const std::vector<Tensor>& g) { return hook(m, g); });
  }
  std::vector<Tensor> run_hooks(Module& m, const std::vector<Tensor>& grad_input) const {
    return chain(hooks, grad_input,
                 [&](const auto& hook, const std::vector<Tensor>& g) { return hook(m, g, grad_output); });
  }

 private:
  // Each hook gets the gradients the one before it left (call returns {} to keep them).
  template <class Hooks, class Call>
  static std::vector<Tensor> chain(const Hooks& list, const std::vector<Tensor>& grads, const Call& call) {
    std::vector<Tensor> current = grads;
    bool changed = false;
    for (const auto& [id, hook] : list) {
      std::vector<Tensor> replaced = call(hook, current);
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
      std::vector<Tensor> replaced = call->run_pre_hooks(*m, grads);
      call->grad_output = replaced.empty() ? grads : replaced;
      if (!input_node) call->run_hooks(*m, std::vector<Tensor>(call->inputs));
      return replaced;
    })[0];
  }
  return out;
}

}  // namespace cohort::nn
