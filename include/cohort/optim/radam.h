// RAdam (Adam with a rectified variance), PyTorch 2.x's update (g the gradient, t the step count from 1):
//   g += weight_decay * p                     (decoupled_weight_decay: p *= 1 - lr * weight_decay)
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g^2
//   rho_inf = 2 / (1 - beta2) - 1,  rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)
//   rho_t > 5:  r = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
//               p -= lr * m / (1 - beta1^t) * sqrt(1 - beta2^t) / (sqrt(v) + eps) * r
//   otherwise:  p -= lr * m / (1 - beta1^t)   (plain momentum while the variance estimate is unreliable)
// State per parameter: "exp_avg", "exp_avg_sq" and the number "step".
//
//   optim::RAdam opt(net->parameters(), optim::RAdamOptions(1e-3).weight_decay(1e-2).decoupled_weight_decay(true));
// Throws on a negative lr, eps or weight decay, or a beta outside [0, 1).
#pragma once

#include <tuple>

#include "cohort/optim/optimizer.h"

namespace cohort::optim {

class RAdamOptions : public OptimizerOptions {
 public:
  RAdamOptions(double lr = 1e-3) : lr_(lr) {}  // NOLINT

  RAdamOptions& lr(double v) { lr_ = v; return *this; }
  RAdamOptions& betas(std::tuple<double, double> v) { betas_ = v; return *this; }
  RAdamOptions& eps(double v) { eps_ = v; return *this; }
  RAdamOptions& weight_decay(double v) { weight_decay_ = v; return *this; }
  RAdamOptions& decoupled_weight_decay(bool v) { decoupled_weight_decay_ = v; return *this; }
  double lr() const { return lr_; }
  std::tuple<double, double> betas() const { return betas_; }
  double eps() const { return eps_; }
  double weight_decay() const { return weight_decay_; }
  bool decoupled_weight_decay() const { return decoupled_weight_decay_; }

  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<RAdamOptions>(*this); }
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
  bool decoupled_weight_decay_ = false;
};

class RAdam : public Optimizer {
 public:
  RAdam(std::vector<Tensor> params, RAdamOptions defaults = {});
  RAdam(std::vector<OptimizerParamGroup> param_groups, RAdamOptions defaults = {});
  Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace cohort::optim
