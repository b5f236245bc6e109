// RMSprop, PyTorch 1.13's update exactly (g the gradient):
//   g += weight_decay * p
//   v = alpha * v + (1 - alpha) * g^2
//   avg = sqrt(v - m^2) + eps, with m = alpha * m + (1 - alpha) * g   (centered)
//   avg = sqrt(v) + eps                                               (otherwise)
//   b = momentum * b + g / avg;  p -= lr * b                          (momentum > 0)
//   p -= lr * g / avg                                                 (otherwise)
// State per parameter: "square_avg", "momentum_buffer" (momentum > 0), "grad_avg" (centered), and
// the number "step".
//
//   optim::RMSprop opt(net->parameters(), optim::RMSpropOptions(0.01).momentum(0.9).centered(true));
// Throws on a negative lr, alpha, eps, momentum or weight decay.
#pragma once

#include "cohort/optim/optimizer.h"

namespace cohort::optim {

class RMSpropOptions : public OptimizerOptions {
 public:
  RMSpropOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT

  RMSpropOptions& lr(double v) { lr_ = v; return *this; }
  RMSpropOptions& alpha(double v) { alpha_ = v; return *this; }
  RMSpropOptions& eps(double v) { eps_ = v; return *this; }
  RMSpropOptions& weight_decay(double v) { weight_decay_ = v; return *this; }
  RMSpropOptions& momentum(double v) { momentum_ = v; return *this; }
  RMSpropOptions& centered(bool v) { centered_ = v; return *this; }
  double lr() const { return lr_; }
  double alpha() const { return alpha_; }
  double eps() const { return eps_; }
  double weight_decay() const { return weight_decay_; }
  double momentum() const { return momentum_; }
  bool centered() const { return centered_; }

  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<RMSpropOptions>(*this); }
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  bool has_momentum() const override { return true; }
  double get_momentum() const override { return momentum_; }
  void set_momentum(double m) override { momentum_ = m; }
  std::map<std::string, double> to_scalars() const override;
  void from_scalars(const std::map<std::string, double>& values) override;
  void validate(const std::string& optimizer) const override;

 private:
  double lr_;
  double alpha_ = 0.99;
  double eps_ = 1e-8;
  double weight_decay_ = 0;
  double momentum_ = 0;
  bool centered_ = false;
};

class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<Tensor> params, RMSpropOptions defaults = {});
  RMSprop(std::vector<OptimizerParamGroup> param_groups, RMSpropOptions defaults = {});
  Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace cohort::optim
