// NAdam (Adam with Nesterov momentum), PyTorch 2.x's update (g the gradient, t the step count from 1):
//   g += weight_decay * p                     (decoupled_weight_decay: p *= 1 - lr * weight_decay)
//   mu_t = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay)),  prod_t = mu_1 * ... * mu_t
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g^2
//   d = sqrt(v / (1 - beta2^t)) + eps
//   p -= lr * (1 - mu_t) / (1 - prod_t) * g / d
//   p -= lr * mu_{t+1} / (1 - prod_t * mu_{t+1}) * m / d
// State per parameter: "exp_avg", "exp_avg_sq" and the numbers "step" and "mu_product" (prod_t).
//
//   optim::NAdam opt(net->parameters(), optim::NAdamOptions(2e-3).betas({0.9, 0.999}).momentum_decay(4e-3));
// Throws on a negative lr, eps, weight decay or momentum_decay, or a beta outside [0, 1).
#pragma once

#include <tuple>

#include "cohort/optim/optimizer.h"

namespace cohort::optim {

class NAdamOptions : public OptimizerOptions {
 public:
  NAdamOptions(double lr = 2e-3) : lr_(lr) {}  // NOLINT

  NAdamOptions& lr(double v) { lr_ = v; return *this; }
  NAdamOptions& betas(std::tuple<double, double> v) { betas_ = v; return *this; }
  NAdamOptions& eps(double v) { eps_ = v; return *this; }
  NAdamOptions& weight_decay(double v) { weight_decay_ = v; return *this; }
  NAdamOptions& momentum_decay(double v) { momentum_decay_ = v; return *this; }
  NAdamOptions& decoupled_weight_decay(bool v) { decoupled_weight_decay_ = v; return *this; }
  double lr() const { return lr_; }
  std::tuple<double, double> betas() const { return betas_; }
  double eps() const { return eps_; }
  double weight_decay() const { return weight_decay_; }
  double momentum_decay() const { return momentum_decay_; }
  bool decoupled_weight_decay() const { return decoupled_weight_decay_; }

  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<NAdamOptions>(*this); }
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  // OneCycleLR cycles beta1, as for Adam.
  bool has_momentum() const override { return true; }
  double get_momentum() const override { return std::get<0>(betas_); }
  void set_momentum(double m) override { std::get<0>(betas_) = m; }
  std::map<std::string, double> to_scalars() const override;
  void from_scalars(const std::map<std::string, double>& values) override;
  void validate(const std::string& optimizer) const override;

 private:
  double lr_;
  std::tuple<double, double> betas_{0.9, 0.999};
  double eps_ = 1e-8;
  double weight_decay_ = 0;
  double momentum_decay_ = 4e-3;
  bool decoupled_weight_decay_ = false;
};

class NAdam : public Optimizer {
 public:
  NAdam(std::vector<Tensor> params, NAdamOptions defaults = {});
  NAdam(std::vector<OptimizerParamGroup> param_groups, NAdamOptions defaults = {});
  Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace cohort::optim
