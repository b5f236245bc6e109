// Adamax: PyTorch 2.x's _single_tensor_adamax, composed of in-place tensor ops.
#include "cohort/optim/adamax.h"

#include <cmath>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"

namespace cohort::optim {

std::map<std::string, double> AdamaxOptions::to_scalars() const {
  return {{"lr", lr_}, {"betas.0", std::get<0>(betas_)}, {"betas.1", std::get<1>(betas_)},
          {"eps", eps_}, {"weight_decay", weight_decay_}};
}

void AdamaxOptions::from_scalars(const std::map<std::string, double>& v) {
  lr_ = v.at("lr");
  betas_ = {v.at("betas.0"), v.at("betas.1")};
  eps_ = v.at("eps");
  weight_decay_ = v.at("weight_decay");
}

void AdamaxOptions::validate(const std::string& optimizer) const {
  auto [beta1, beta2] = betas_;
  COHORT_CHECK(lr_ >= 0, optimizer, ": learning rate must be non-negative, got ", lr_);
  COHORT_CHECK(eps_ >= 0, optimizer, ": eps must be non-negative, got ", eps_);
  COHORT_CHECK(beta1 >= 0 && beta1 < 1, optimizer, ": betas[0] must be in [0, 1), got ", beta1);
  COHORT_CHECK(beta2 >= 0 && beta2 < 1, optimizer, ": betas[1] must be in [0, 1), got ", beta2);
  COHORT_CHECK(weight_decay_ >= 0, optimizer, ": weight_decay must be non-negative, got ", weight_decay_);
}

Adamax::Adamax(std::vector<Tensor> params, AdamaxOptions defaults)
    : Adamax(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}

Adamax::Adamax(std::vector<OptimizerParamGroup> param_groups, AdamaxOptions defaults)
    : Optimizer("Adamax", std::move(param_groups), std::make_unique<AdamaxOptions>(defaults)) {}

Tensor Adamax::step(LossClosure closure) {
  Tensor loss = call_closure(closure);
  NoGradGuard no_grad;
  for (auto& group : param_groups()) {
    const auto& o = static_cast<const AdamaxOptions&>(group.options());
    auto [beta1, beta2] = o.betas();
    for (const Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      Tensor grad = p.grad();
      OptimizerParamState& s = state_of(p);
      if (s.tensors.empty()) {
        s.scalars["step"] = 0;
        s.tensors["exp_avg"] = zeros_like(p);
        s.tensors["exp_inf"] = zeros_like(p);
      }
      const double step = s.scalars["step"] += 1;
      if (o.weight_decay() != 0) grad = grad.add(p, o.weight_decay());
      Tensor& exp_avg = s.tensors["exp_avg"];
      Tensor& exp_inf = s.tensors["exp_inf"];
      exp_avg.mul_(beta1).add_(grad, 1 - beta1);  // lerp_ toward grad
      exp_inf.copy_(maximum(exp_inf.mul_(beta2), grad.abs().add_(o.eps())));
      const double clr = o.lr() / (1 - std::pow(beta1, step));
      p.add_(exp_avg / exp_inf, -clr);  // addcdiv_
    }
  }
  return loss;
}

}  // namespace cohort::optim
