// Adadelta: PyTorch 2.x's _single_tensor_adadelta, composed of in-place tensor ops.
#include "cohort/optim/adadelta.h"

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/ops/creation.h"

namespace cohort::optim {

std::map<std::string, double> AdadeltaOptions::to_scalars() const {
  return {{"lr", lr_}, {"rho", rho_}, {"eps", eps_}, {"weight_decay", weight_decay_}};
}

void AdadeltaOptions::from_scalars(const std::map<std::string, double>& v) {
  lr_ = v.at("lr");
  rho_ = v.at("rho");
  eps_ = v.at("eps");
  weight_decay_ = v.at("weight_decay");
}

void AdadeltaOptions::validate(const std::string& optimizer) const {
  COHORT_CHECK(lr_ >= 0, optimizer, ": learning rate must be non-negative, got ", lr_);
  COHORT_CHECK(rho_ >= 0 && rho_ <= 1, optimizer, ": rho must be in [0, 1], got ", rho_);
  COHORT_CHECK(eps_ >= 0, optimizer, ": eps must be non-negative, got ", eps_);
  COHORT_CHECK(weight_decay_ >= 0, optimizer, ": weight_decay must be non-negative, got ", weight_decay_);
}

Adadelta::Adadelta(std::vector<Tensor> params, AdadeltaOptions defaults)
    : Adadelta(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}

Adadelta::Adadelta(std::vector<OptimizerParamGroup> param_groups, AdadeltaOptions defaults)
    : Optimizer("Adadelta", std::move(param_groups), std::make_unique<AdadeltaOptions>(defaults)) {}

Tensor Adadelta::step(LossClosure closure) {
  Tensor loss = call_closure(closure);
  NoGradGuard no_grad;
  for (auto& group : param_groups()) {
    const auto& o = static_cast<const AdadeltaOptions&>(group.options());
    const double rho = o.rho();
    for (const Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      Tensor grad = p.grad();
      OptimizerParamState& s = state_of(p);
      if (s.tensors.empty()) {
        s.scalars["step"] = 0;
        s.tensors["square_avg"] = zeros_like(p);
        s.tensors["acc_delta"] = zeros_like(p);
      }
      s.scalars["step"] += 1;
      if (o.weight_decay() != 0) grad = grad.add(p, o.weight_decay());
      Tensor& square_avg = s.tensors["square_avg"];
      Tensor& acc_delta = s.tensors["acc_delta"];
      square_avg.mul_(rho).add_(grad * grad, 1 - rho);  // addcmul_
      Tensor std = square_avg.add(o.eps()).sqrt_();
      Tensor delta = acc_delta.add(o.eps()).sqrt_();
      delta.div_(std).mul_(grad);
      acc_delta.mul_(rho).add_(delta * delta, 1 - rho);  // addcmul_
      p.add_(delta, -o.lr());
    }
  }
  return loss;
}

}  // namespace cohort::optim
