// Adamax (Adam with an infinity norm), PyTorch 2.x's update (g the gradient, t the step count from 1):
//   g += weight_decay * p
//   m = beta1 * m + (1 - beta1) * g
//   u = max(beta2 * u, |g| + eps)
//   p -= lr / (1 - beta1^t) * m / u
// State per parameter: "exp_avg", "exp_inf" and the number "step".
//
//   optim::Adamax opt(net->parameters(), optim::AdamaxOptions(2e-3).betas({0.9, 0.99}));
// Throws on a negative lr, eps or weight decay, or a beta outside [0, 1).
#pragma once

#include <tuple>

#include "cohort/optim/optimizer.h"

namespace cohort::optim {

class AdamaxOptions : public OptimizerOptions {
 public:
  AdamaxOptions(double lr = 2e-3) : lr_(lr) {}  // NOLINT

  AdamaxOptions& lr(double v) { lr_ = v; return *this; }
  AdamaxOptions& betas(std::tuple<double, double> v) { betas_ = v; return *this; }
  AdamaxOptions& eps(double v) { eps_ = v; return *this; }
  AdamaxOptions& weight_decay(double v) { weight_decay_ = v; return *this; }
  double lr() const { return lr_; }
  std::tuple<double, double> betas() const { return betas_; }
  double eps() const { return eps_; }
  double weight_decay() const { return weight_decay_; }

  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<AdamaxOptions>(*this); }
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
};

class Adamax : public Optimizer {
 public:
  Adamax(std::vector<Tensor> params, AdamaxOptions defaults = {});
  Adamax(std::vector<OptimizerParamGroup> param_groups, AdamaxOptions defaults = {});
  Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace cohort::optim
