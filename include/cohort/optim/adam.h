// Adam and AdamW, PyTorch 1.13's updates exactly (g the gradient, t the step count from 1):
//   Adam:  g += weight_decay * p             AdamW: p *= 1 - lr * weight_decay
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g^2
//   v_max = max(v_max, v)                     (amsgrad; then v_max replaces v below)
//   p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// State per parameter: "exp_avg", "exp_avg_sq", "max_exp_avg_sq" (amsgrad) and the number "step".
//
//   optim::Adam opt(net->parameters(), optim::AdamOptions(1e-3).betas({0.9, 0.98}).amsgrad(true));
// Throws on a negative lr, eps or weight decay, or a beta outside [0, 1).
#pragma once

#include <tuple>

#include "cohort/optim/optimizer.h"

namespace cohort::optim {

// The options Adam and AdamW share; AdamW differs in its default weight decay and in decoupling it.
template <class Derived>
class AdamOptionsBase : public OptimizerOptions {
 public:
  Derived& lr(double v) { lr_ = v; return self(); }
  Derived& betas(std::tuple<double, double> v) { betas_ = v; return self(); }
  Derived& eps(double v) { eps_ = v; return self(); }
  Derived& weight_decay(double v) { weight_decay_ = v; return self(); }
  Derived& amsgrad(bool v) { amsgrad_ = v; return self(); }
  double lr() const { return lr_; }
  std::tuple<double, double> betas() const { return betas_; }
  double eps() const { return eps_; }
  double weight_decay() const { return weight_decay_; }
  bool amsgrad() const { return amsgrad_; }

  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<Derived>(self()); }
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
  bool has_momentum() const override { return true; }
  double get_momentum() const override { return std::get<0>(betas_); }
  void set_momentum(double m) override { std::get<0>(betas_) = m; }
  std::map<std::string, double> to_scalars() const override {
    return {{"lr", lr_}, {"betas.0", std::get<0>(betas_)}, {"betas.1", std::get<1>(betas_)},
            {"eps", eps_}, {"weight_decay", weight_decay_}, {"amsgrad", amsgrad_ ? 1.0 : 0.0}};
  }
  void from_scalars(const std::map<std::string, double>& v) override {
    lr_ = v.at("lr");
    betas_ = {v.at("betas.0"), v.at("betas.1")};
    eps_ = v.at("eps");
    weight_decay_ = v.at("weight_decay");
    amsgrad_ = v.at("amsgrad") != 0;
  }
  void validate(const std::string& optimizer) const override;

 protected:
  AdamOptionsBase(double lr, double weight_decay) : lr_(lr), weight_decay_(weight_decay) {}

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
  const Derived& self() const { return static_cast<const Derived&>(*this); }
  double lr_;
  std::tuple<double, double> betas_{0.9, 0.999};
  double eps_ = 1e-8;
  double weight_decay_;
  bool amsgrad_ = false;
};

class AdamOptions : public AdamOptionsBase<AdamOptions> {
 public:
  AdamOptions(double lr = 1e-3) : AdamOptionsBase(lr, 0) {}  // NOLINT
};

class AdamWOptions : public AdamOptionsBase<AdamWOptions> {
 public:
  AdamWOptions(double lr = 1e-3) : AdamOptionsBase(lr, 1e-2) {}  // NOLINT
};

class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, AdamOptions defaults = {});
  Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults = {});
  Tensor step(LossClosure closure = nullptr) override;
};

class AdamW : public Optimizer {
 public:
  AdamW(std::vector<Tensor> params, AdamWOptions defaults = {});
  AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults = {});
  Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace cohort::optim
