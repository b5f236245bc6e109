// Adam and AdamW: PyTorch 1.13's _single_tensor_adam / _single_tensor_adamw, composed of in-place
// tensor ops (addcmul_ and addcdiv_ are spelled as a product or quotient added in place).
#include "cohort/optim/adam.h"

#include <cmath>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"

namespace cohort::optim {

template <class Derived>
void AdamOptionsBase<Derived>::validate(const std::string& optimizer) const {
  auto [beta1, beta2] = betas_;
  COHORT_CHECK(lr_ >= 0, optimizer, ": learning rate must be non-negative, got ", lr_);
  COHORT_CHECK(eps_ >= 0, optimizer, ": eps must be non-negative, got ", eps_);
  COHORT_CHECK(beta1 >= 0 && beta1 < 1, optimizer, ": betas[0] must be in [0, 1), got ", beta1);
  COHORT_CHECK(beta2 >= 0 && beta2 < 1, optimizer, ": betas[1] must be in [0, 1), got ", beta2);
  COHORT_CHECK(weight_decay_ >= 0, optimizer, ": weight_decay must be non-negative, got ", weight_decay_);
}

template class AdamOptionsBase<AdamOptions>;
template class AdamOptionsBase<AdamWOptions>;

namespace {

// One update of every parameter with a grad; `decoupled` selects AdamW's weight decay.
template <class Options>
void adam_step(Optimizer& opt, bool decoupled) {
  for (auto& group : opt.param_groups()) {
    const auto& o = static_cast<const Options&>(group.options());
    auto [beta1, beta2] = o.betas();
    for (const Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      Tensor grad = p.grad();
      OptimizerParamState& s = opt.state()[p.unsafe_impl()];
      if (s.tensors.empty()) {
        s.scalars["step"] = 0;
        s.tensors["exp_avg"] = zeros_like(p);
        s.tensors["exp_avg_sq"] = zeros_like(p);
        if (o.amsgrad()) s.tensors["max_exp_avg_sq"] = zeros_like(p);
      }
      const double step = s.scalars["step"] += 1;
      if (decoupled) p.mul_(1 - o.lr() * o.weight_decay());
      else if (o.weight_decay() != 0) grad = grad.add(p, o.weight_decay());
      Tensor& exp_avg = s.tensors["exp_avg"];
      Tensor& exp_avg_sq = s.tensors["exp_avg_sq"];
      exp_avg.mul_(beta1).add_(grad, 1 - beta1);
      exp_avg_sq.mul_(beta2).add_(grad * grad, 1 - beta2);  // addcmul_
      const double bias_correction1 = 1 - std::pow(beta1, step);
      const double bias_correction2 = 1 - std::pow(beta2, step);
      const double step_size = o.lr() / bias_correction1;
      const double bias_correction2_sqrt = std::sqrt(bias_correction2);
      Tensor denom;
      if (o.amsgrad()) {
        auto it = s.tensors.find("max_exp_avg_sq");
        COHORT_CHECK(it != s.tensors.end(), opt.name(),
                     ": amsgrad was switched on after the first step; the parameter has no max_exp_avg_sq state");
        it->second.copy_(maximum(it->second, exp_avg_sq));
        denom = (it->second.sqrt() / bias_correction2_sqrt).add_(o.eps());
      } else {
        denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(o.eps());
      }
      p.add_(exp_avg / denom, -step_size);  // addcdiv_
    }
  }
}

}  // namespace

Adam::Adam(std::vector<Tensor> params, AdamOptions defaults)
    : Adam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}

Adam::Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults)
    : Optimizer("Adam", std::move(param_groups), std::make_unique<AdamOptions>(defaults)) {}

AdamW::AdamW(std::vector<Tensor> params, AdamWOptions defaults)
    : AdamW(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}

AdamW::AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults)
    : Optimizer("AdamW", std::move(param_groups), std::make_unique<AdamWOptions>(defaults)) {}

Tensor Adam::step(LossClosure closure) {
  Tensor loss = call_closure(closure);
  NoGradGuard no_grad;
  adam_step<AdamOptions>(*this, /*decoupled=*/false);
  return loss;
}

Tensor AdamW::step(LossClosure closure) {
  Tensor loss = call_closure(closure);
  NoGradGuard no_grad;
  adam_step<AdamWOptions>(*this, /*decoupled=*/true);
  return loss;
}

}  // namespace cohort::optim
