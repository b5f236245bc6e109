// Stochastic gradient descent with momentum, dampening, Nesterov momentum and weight decay,
// PyTorch's update exactly (with g the gradient, b the momentum buffer):
//   g += weight_decay * p
//   b = g on the first step, else b = momentum * b + (1 - dampening) * g
//   g = nesterov ? g + momentum * b : b          (when momentum != 0)
//   p -= lr * g
//
//   optim::SGD opt(net->parameters(), optim::SGDOptions(0.01).momentum(0.9).nesterov(true));
// Throws on a negative lr, momentum or weight decay, and on nesterov without momentum or with
// dampening.
#pragma once

#include "cohort/optim/optimizer.h"

namespace cohort::optim {

class SGDOptions : public OptimizerOptions {
 public:
  SGDOptions(double lr) : lr_(lr) {}  // NOLINT (libtorch converts a number implicitly too)

  SGDOptions& lr(double v) { lr_ = v; return *this; }
  SGDOptions& momentum(double v) { momentum_ = v; return *this; }
  SGDOptions& dampening(double v) { dampening_ = v; return *this; }
  SGDOptions& weight_decay(double v) { weight_decay_ = v; return *this; }
  SGDOptions& nesterov(bool v) { nesterov_ = v; return *this; }
  double lr() const { return lr_; }
  double momentum() const { return momentum_; }
  double dampening() const { return dampening_; }
  double weight_decay() const { return weight_decay_; }
  bool nesterov() const { return nesterov_; }

  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<SGDOptions>(*this); }
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
  double momentum_ = 0;
  double dampening_ = 0;
  double weight_decay_ = 0;
  bool nesterov_ = false;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, SGDOptions defaults);
  SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults);
  Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace cohort::optim
