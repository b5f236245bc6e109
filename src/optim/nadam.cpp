// NAdam: PyTorch 2.x's _single_tensor_nadam, composed of in-place tensor ops.
#include "cohort/optim/nadam.h"

#include <cmath>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/ops/creation.h"

namespace cohort::optim {

std::map<std::string, double> NAdamOptions::to_scalars() const {
  return {{"lr", lr_},
          {"betas.0", std::get<0>(betas_)},
          {"betas.1", std::get<1>(betas_)},
          {"eps", eps_},
          {"weight_decay", weight_decay_},
          {"momentum_decay", momentum_decay_},
          {"decoupled_weight_decay", decoupled_weight_decay_ ? 1.0 : 0.0}};
}

void NAdamOptions::from_scalars(const std::map<std::string, double>& v) {
  lr_ = v.at("lr");
  betas_ = {v.at("betas.0"), v.at("betas.1")};
  eps_ = v.at("eps");
  weight_decay_ = v.at("weight_decay");
  momentum_decay_ = v.at("momentum_decay");
  decoupled_weight_decay_ = v.at("decoupled_weight_decay") != 0;
}

void NAdamOptions::validate(const std::string& optimizer) const {
  auto [beta1, beta2] = betas_;
  COHORT_CHECK(lr_ >= 0, optimizer, ": learning rate must be non-negative, got ", lr_);
  COHORT_CHECK(eps_ >= 0, optimizer, ": eps must be non-negative, got ", eps_);
  COHORT_CHECK(beta1 >= 0 && beta1 < 1, optimizer, ": betas[0] must be in [0, 1), got ", beta1);
  COHORT_CHECK(beta2 >= 0 && beta2 < 1, optimizer, ": betas[1] must be in [0, 1), got ", beta2);
  COHORT_CHECK(weight_decay_ >= 0, optimizer, ": weight_decay must be non-negative, got ", weight_decay_);
  COHORT_CHECK(momentum_decay_ >= 0, optimizer, ": momentum_decay must be non-negative, got ", momentum_decay_);
}

NAdam::NAdam(std::vector<Tensor> params, NAdamOptions defaults)
    : NAdam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}

NAdam::NAdam(std::vector<OptimizerParamGroup> param_groups, NAdamOptions defaults)
    : Optimizer("NAdam", std::move(param_groups), std::make_unique<NAdamOptions>(defaults)) {}

Tensor NAdam::step(LossClosure closure) {
  Tensor loss = call_closure(closure);
  NoGradGuard no_grad;
  for (auto& group : param_groups()) {
    const auto& o = static_cast<const NAdamOptions&>(group.options());
    auto [beta1, beta2] = o.betas();
    for (const Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      Tensor grad = p.grad();
      OptimizerParamState& s = state_of(p);
      if (s.tensors.empty()) {
        s.scalars["step"] = 0;
        s.scalars["mu_product"] = 1;
        s.tensors["exp_avg"] = zeros_like(p);
        s.tensors["exp_avg_sq"] = zeros_like(p);
      }
      const double step = s.scalars["step"] += 1;
      const double bias_correction2 = 1 - std::pow(beta2, step);
      if (o.weight_decay() != 0) {
        if (o.decoupled_weight_decay()) p.mul_(1 - o.lr() * o.weight_decay());
        else grad = grad.add(p, o.weight_decay());
      }
      const double mu = beta1 * (1.0 - 0.5 * std::pow(0.96, step * o.momentum_decay()));
      const double mu_next = beta1 * (1.0 - 0.5 * std::pow(0.96, (step + 1) * o.momentum_decay()));
      const double mu_product = s.scalars["mu_product"] *= mu;
      Tensor& exp_avg = s.tensors["exp_avg"];
      Tensor& exp_avg_sq = s.tensors["exp_avg_sq"];
      exp_avg.mul_(beta1).add_(grad, 1 - beta1);  // lerp_ toward grad
      exp_avg_sq.mul_(beta2).add_(grad * grad, 1 - beta2);  // addcmul_
      Tensor denom = (exp_avg_sq / bias_correction2).sqrt().add_(o.eps());
      const double mu_product_next = mu_product * mu_next;
      p.add_(grad / denom, -o.lr() * (1.0 - mu) / (1.0 - mu_product));  // addcdiv_
      p.add_(exp_avg / denom, -o.lr() * mu_next / (1.0 - mu_product_next));  // addcdiv_
    }
  }
  return loss;
}

}  // namespace cohort::optim
