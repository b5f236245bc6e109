// RMSprop: PyTorch 1.13's _single_tensor_rmsprop, composed of in-place tensor ops.
#include "cohort/optim/rmsprop.h"

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/ops/creation.h"

namespace cohort::optim {

std::map<std::string, double> RMSpropOptions::to_scalars() const {
  return {{"lr", lr_}, {"alpha", alpha_}, {"eps", eps_}, {"weight_decay", weight_decay_},
          {"momentum", momentum_}, {"centered", centered_ ? 1.0 : 0.0}};
}

void RMSpropOptions::from_scalars(const std::map<std::string, double>& v) {
  lr_ = v.at("lr");
  alpha_ = v.at("alpha");
  eps_ = v.at("eps");
  weight_decay_ = v.at("weight_decay");
  momentum_ = v.at("momentum");
  centered_ = v.at("centered") != 0;
}

void RMSpropOptions::validate(const std::string& optimizer) const {
  COHORT_CHECK(lr_ >= 0, optimizer, ": learning rate must be non-negative, got ", lr_);
  COHORT_CHECK(eps_ >= 0, optimizer, ": eps must be non-negative, got ", eps_);
  COHORT_CHECK(momentum_ >= 0, optimizer, ": momentum must be non-negative, got ", momentum_);
  COHORT_CHECK(weight_decay_ >= 0, optimizer, ": weight_decay must be non-negative, got ", weight_decay_);
  COHORT_CHECK(alpha_ >= 0, optimizer, ": alpha must be non-negative, got ", alpha_);
}

RMSprop::RMSprop(std::vector<Tensor> params, RMSpropOptions defaults)
    : RMSprop(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, std::move(defaults)) {}

RMSprop::RMSprop(std::vector<OptimizerParamGroup> param_groups, RMSpropOptions defaults)
    : Optimizer("RMSprop", std::move(param_groups), std::make_unique<RMSpropOptions>(defaults)) {}

Tensor RMSprop::step(LossClosure closure) {
  Tensor loss = call_closure(closure);
  NoGradGuard no_grad;
  for (auto& group : param_groups()) {
    const auto& o = static_cast<const RMSpropOptions&>(group.options());
    for (const Tensor& p : group.params()) {
      if (!p.grad().defined()) continue;
      Tensor grad = p.grad();
      OptimizerParamState& s = state_of(p);
      if (s.tensors.empty()) s.scalars["step"] = 0;
      // Buffers are created when first needed, so switching momentum or centered on later works.
      auto buffer = [&](const char* name) -> Tensor& {
        Tensor& t = s.tensors[name];
        if (!t.defined()) t = zeros_like(p);
        return t;
      };
      s.scalars["step"] += 1;
      if (o.weight_decay() != 0) grad = grad.add(p, o.weight_decay());
      Tensor& square_avg = buffer("square_avg");
      square_avg.mul_(o.alpha()).add_(grad * grad, 1 - o.alpha());  // addcmul_
      Tensor avg;
      if (o.centered()) {
        Tensor& grad_avg = buffer("grad_avg");
        grad_avg.mul_(o.alpha()).add_(grad, 1 - o.alpha());
        avg = (square_avg - grad_avg * grad_avg).sqrt();
      } else {
        avg = square_avg.sqrt();
      }
      avg.add_(o.eps());
      if (o.momentum() > 0) {
        Tensor& buf = buffer("momentum_buffer");
        buf.mul_(o.momentum()).add_(grad / avg);  // addcdiv_
        p.add_(buf, -o.lr());
      } else {
        p.add_(grad / avg, -o.lr());  // addcdiv_
      }
    }
  }
  return loss;
}

}  // namespace cohort::optim
