// Adagrad, PyTorch 1.13's update exactly (g the gradient, t the step count from 1):
//   g += weight_decay * p
//   sum += g^2                      (sum starts at initial_accumulator_value)
//   p -= lr / (1 + (t - 1) * lr_decay) * g / (sqrt(sum) + eps)
// State per parameter: "sum" and the number "step".
//
//   optim::Adagrad opt(net->parameters(), optim::AdagradOptions(0.1).lr_decay(1e-3));
// Throws on a negative lr, lr_decay, weight decay, initial_accumulator_value or eps.
#pragma once

#include "cohort/optim/optimizer.h"

namespace cohort::optim {

class AdagradOptions : public OptimizerOptions {
 public:
  AdagradOptions(double lr = 1e-2) : lr_(lr) {}  // NOLINT

  AdagradOptions& lr(double v) { lr_ = v; return *this; }
  AdagradOptions& lr_decay(double v) { lr_decay_ = v; return *this; }
  AdagradOptions& weight_decay(double v) { weight_decay_ = v; return *this; }
  AdagradOptions& initial_accumulator_value(double v) { initial_accumulator_value_ = v; return *this; }
  AdagradOptions& eps(double v) { eps_ = v; return *this; }
  double lr() const { return lr_; }
  double lr_decay() const { return lr_decay_; }
  double weight_decay() const { return weight_decay_; }
  double initial_accumulator_value() const { return initial_accumulator_value_; }
  double eps() const { return eps_; }

  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<AdagradOptions>(*this); }
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  std::map<std::string, double> to_scalars() const override;
  void from_scalars(const std::map<std::string, double>& values) override;
  void validate(const std::string& optimizer) const override;

 private:
  double lr_;
  double lr_decay_ = 0;
  double weight_decay_ = 0;
  double initial_accumulator_value_ = 0;
  double eps_ = 1e-10;
};

class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<Tensor> params, AdagradOptions defaults = {});
  Adagrad(std::vector<OptimizerParamGroup> param_groups, AdagradOptions defaults = {});
  Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace cohort::optim
