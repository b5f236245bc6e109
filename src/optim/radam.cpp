// RAdam: PyTorch 2.x's _single_tensor_radam, composed of tensor ops in PyTorch's order (the products
// are formed left to right, so float64 trajectories agree to the last bits).
#include "cohort/optim/radam.h"

#include <cmath>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/ops/creation.h"

namespace cohort::optim {

std::map<std::string, double> RAdamOptions::to_scalars() const {
  return {{"lr", lr_},
          {"betas.0", std::get<0>(betas_)},
          {"betas.1", std::get<1>(betas_)},
          {"eps", eps_},
          {"weight_decay", weight_decay_},
          {"decoupled_weight_decay", decoupled_weight_decay_ ? 1.0 : 0.0}};
}

void RAdamOptions::from_scalars(const std::map<std::string, double>& v) {
  lr_ = v.at("lr");
  betas_ = {v.at("betas.0"), v.at("betas.1")};
  eps_ = v.at("eps");
  weight_decay_ = v.at("weight_decay");
  decoupled_weight_decay_ = v.at("decoupled_weight_decay") != 0;
}

void RAdamOptions::validate(const std::string& optimizer) const {
  auto [beta1, beta2] = betas_;
  COHORT_CHECK(lr_ >= 0, optimizer, ": learning rate must be non-negative, got ", lr_);
  COHORT_CHECK(eps_ >= 0, optimizer, ": eps must be non-negative, got ", eps_);
  COHORT_CHECK(beta1 >= 0 && beta1 < 1, optimizer, ": betas[0] must be in [0, 1), got ", beta1);
  COHORT_CHECK(beta2 >= 0 && beta2 < 1, optimizer, ": betas[1] must be in [0, 1), got ", beta2);
  COHORT_CHECK(weight_decay_ >= 0, optimizer, ": weight_decay must be non-negative, got ", weight_decay_);
}

RAdam::RAdam(std::vector<Tensor> params, RAdamOptions defaults)
    : RAdam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}

RAdam::RAdam(std::vector<OptimizerParamGroup> param_groups, RAdamOptions defaults)
    : Optimizer("RAdam", std::move(param_groups), std::make_unique<RAdamOptions>(defaults)) {}

Tensor RAdam::step(LossClosure closure) {
  Tensor loss = call_closure(closure);
  NoGradGuard no_grad;
  for (auto& group : param_groups()) {
    const auto& o = static_cast<const RAdamOptions&>(group.options());
    auto [beta1, beta2] = o.betas();
    for (const Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      Tensor grad = p.grad();
      OptimizerParamState& s = state_of(p);
      if (s.tensors.empty()) {
        s.scalars["step"] = 0;
        s.tensors["exp_avg"] = zeros_like(p);
        s.tensors["exp_avg_sq"] = zeros_like(p);
      }
      const double step = s.scalars["step"] += 1;
      if (o.weight_decay() != 0) {
        if (o.decoupled_weight_decay()) p.mul_(1 - o.lr() * o.weight_decay());
        else grad = grad.add(p, o.weight_decay());
      }
      Tensor& exp_avg = s.tensors["exp_avg"];
      Tensor& exp_avg_sq = s.tensors["exp_avg_sq"];
      exp_avg.mul_(beta1).add_(grad, 1 - beta1);  // lerp_ toward grad
      exp_avg_sq.mul_(beta2).add_(grad * grad, 1 - beta2);  // addcmul_
      const double bias_correction1 = 1 - std::pow(beta1, step);
      const double bias_correction2 = 1 - std::pow(beta2, step);
      Tensor bias_corrected_exp_avg = exp_avg / bias_correction1;
      const double rho_inf = 2 / (1 - beta2) - 1;
      const double rho_t = rho_inf - 2 * step * std::pow(beta2, step) / bias_correction2;
      if (rho_t > 5.0) {
        const double rect =
            std::sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t));
        Tensor adaptive_lr = std::sqrt(bias_correction2) / exp_avg_sq.sqrt().add_(o.eps());
        p.sub_(bias_corrected_exp_avg * o.lr() * adaptive_lr * rect);
      } else {
        p.sub_(bias_corrected_exp_avg * o.lr());
      }
    }
  }
  return loss;
}

}  // namespace cohort::optim
