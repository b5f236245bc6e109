// Adagrad: PyTorch 1.13's _single_tensor_adagrad (dense gradients), composed of in-place tensor ops.
#include "cohort/optim/adagrad.h"

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/ops/creation.h"

namespace cohort::optim {

std::map<std::string, double> AdagradOptions::to_scalars() const {
  return {{"lr", lr_}, {"lr_decay", lr_decay_}, {"weight_decay", weight_decay_},
          {"initial_accumulator_value", initial_accumulator_value_}, {"eps", eps_}};
}

void AdagradOptions::from_scalars(const std::map<std::string, double>& v) {
  lr_ = v.at("lr");
  lr_decay_ = v.at("lr_decay");
  weight_decay_ = v.at("weight_decay");
  initial_accumulator_value_ = v.at("initial_accumulator_value");
  eps_ = v.at("eps");
}

void AdagradOptions::validate(const std::string& optimizer) const {
  COHORT_CHECK(lr_ >= 0, optimizer, ": learning rate must be non-negative, got ", lr_);
  COHORT_CHECK(lr_decay_ >= 0, optimizer, ": lr_decay must be non-negative, got ", lr_decay_);
  COHORT_CHECK(weight_decay_ >= 0, optimizer, ": weight_decay must be non-negative, got ", weight_decay_);
  COHORT_CHECK(initial_accumulator_value_ >= 0, optimizer, ": initial_accumulator_value must be non-negative, got ",
               initial_accumulator_value_);
  COHORT_CHECK(eps_ >= 0, optimizer, ": eps must be non-negative, got ", eps_);
}

Adagrad::Adagrad(std::vector<Tensor> params, AdagradOptions defaults)
    : Adagrad(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}

Adagrad::Adagrad(std::vector<OptimizerParamGroup> param_groups, AdagradOptions defaults)
    : Optimizer("Adagrad", std::move(param_groups), std::make_unique<AdagradOptions>(defaults)) {}

Tensor Adagrad::step(LossClosure closure) {
  Tensor loss = call_closure(closure);
  NoGradGuard no_grad;
  for (auto& group : param_groups()) {
    const auto& o = static_cast<const AdagradOptions&>(group.options());
    for (const Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      Tensor grad = p.grad();
      OptimizerParamState& s = state_of(p);
      // PyTorch creates this state in the constructor; creating it on first use gives the same values.
      if (!s.tensors.count("sum")) {
        s.scalars["step"] = 0;
        s.tensors["sum"] = full_like(p, o.initial_accumulator_value());
      }
      const double step = s.scalars["step"] += 1;
      if (o.weight_decay() != 0) grad = grad.add(p, o.weight_decay());
      const double clr = o.lr() / (1 + (step - 1) * o.lr_decay());
      Tensor& sum = s.tensors["sum"];
      sum.add_(grad * grad);  // addcmul_
      Tensor denom = sum.sqrt().add_(o.eps());
      p.add_(grad / denom, -clr);  // addcdiv_
    }
  }
  return loss;
}

}  // namespace cohort::optim
