// Adadelta, PyTorch 2.x's update (g the gradient):
//   g += weight_decay * p
//   v = rho * v + (1 - rho) * g^2
//   delta = sqrt(u + eps) / sqrt(v + eps) * g
//   u = rho * u + (1 - rho) * delta^2
//   p -= lr * delta
// State per parameter: "square_avg", "acc_delta" and the number "step".
//
//   optim::Adadelta opt(net->parameters(), optim::AdadeltaOptions(1.0).rho(0.95));
// Throws on a negative lr, eps or weight decay, or a rho outside [0, 1].
#pragma once

#include "cohort/optim/optimizer.h"

namespace cohort::optim {

class AdadeltaOptions : public OptimizerOptions {
 public:
  AdadeltaOptions(double lr = 1.0) : lr_(lr) {}  // NOLINT

  AdadeltaOptions& lr(double v) { lr_ = v; return *this; }
  AdadeltaOptions& rho(double v) { rho_ = v; return *this; }
  AdadeltaOptions& eps(double v) { eps_ = v; return *this; }
  AdadeltaOptions& weight_decay(double v) { weight_decay_ = v; return *this; }
  double lr() const { return lr_; }
  double rho() const { return rho_; }
  double eps() const { return eps_; }
  double weight_decay() const { return weight_decay_; }

  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<AdadeltaOptions>(*this); }
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  std::map<std::string, double> to_scalars() const override;
  void from_scalars(const std::map<std::string, double>& values) override;
  void validate(const std::string& optimizer) const override;

 private:
  double lr_;
  double rho_ = 0.9;
  double eps_ = 1e-6;
  double weight_decay_ = 0;
};

class Adadelta : public Optimizer {
 public:
  Adadelta(std::vector<Tensor> params, AdadeltaOptions defaults = {});
  Adadelta(std::vector<OptimizerParamGroup> param_groups, AdadeltaOptions defaults = {});
  Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace cohort::optim
