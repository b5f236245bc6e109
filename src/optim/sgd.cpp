// SGD: PyTorch 1.13's _single_tensor_sgd; each parameter's update is cohort::sgd_step_
// (ops/optimizer_step.h), fused into one loop where the layout allows.
#include "cohort/optim/sgd.h"

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/ops/optimizer_step.h"

namespace cohort::optim {

std::map<std::string, double> SGDOptions::to_scalars() const {
  return {{"lr", lr_}, {"momentum", momentum_}, {"dampening", dampening_},
          {"weight_decay", weight_decay_}, {"nesterov", nesterov_ ? 1.0 : 0.0}};
}

void SGDOptions::from_scalars(const std::map<std::string, double>& v) {
  lr_ = v.at("lr");
  momentum_ = v.at("momentum");
  dampening_ = v.at("dampening");
  weight_decay_ = v.at("weight_decay");
  nesterov_ = v.at("nesterov") != 0;
}

void SGDOptions::validate(const std::string& optimizer) const {
  COHORT_CHECK(lr_ >= 0, optimizer, ": learning rate must be non-negative, got ", lr_);
  COHORT_CHECK(momentum_ >= 0, optimizer, ": momentum must be non-negative, got ", momentum_);
  COHORT_CHECK(weight_decay_ >= 0, optimizer, ": weight_decay must be non-negative, got ", weight_decay_);
  COHORT_CHECK(!nesterov_ || (momentum_ > 0 && dampening_ == 0), optimizer,
               ": Nesterov momentum requires a momentum and zero dampening, got momentum=", momentum_,
               " dampening=", dampening_);
}

SGD::SGD(std::vector<Tensor> params, SGDOptions defaults)
    : SGD(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}

SGD::SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults)
    : Optimizer("SGD", std::move(param_groups), std::make_unique<SGDOptions>(defaults)) {}

Tensor SGD::step(LossClosure closure) {
  Tensor loss = call_closure(closure);
  NoGradGuard no_grad;
  for (auto& group : param_groups()) {
    const auto& o = static_cast<const SGDOptions&>(group.options());
    for (const Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      // The momentum buffer: undefined before the first step (sgd_step_ creates it).
      auto* buffers = o.momentum() != 0 ? &state_of(p).tensors : nullptr;
      Tensor buffer;
      if (buffers)
        if (auto it = buffers->find("momentum_buffer"); it != buffers->end()) buffer = it->second;
      sgd_step_(p, p.grad(), buffer, o.lr(), o.momentum(), o.dampening(), o.weight_decay(), o.nesterov());
      if (buffers) (*buffers)["momentum_buffer"] = buffer;
    }
  }
  return loss;
}

}  // namespace cohort::optim
