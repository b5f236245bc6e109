// sgd_step_: one fused loop per parameter (Note [Fused SGD step]) or, for the layouts that loop does
// not take, composed of in-place tensor ops. Kernel: ops/cpu/optimizer_kernels.h.
#include "cohort/ops/optimizer_step.h"

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/profiling.h"
#include "cohort/ops/creation.h"
#include "ops/cpu/optimizer_kernels.h"
#include "ops/internal.h"

namespace cohort {

namespace {

// Note [Fused SGD step]
// Composed of tensor ops, one SGD step with momentum is three passes over each parameter (buf *= m,
// buf += (1 - dampening) g, p -= lr buf), each with its own dispatch and scalar-tensor allocation:
// 7% of a blitz CNN step at batch 4. The fused loop (src/ops/cpu/sgd.cpp) reads each element once
// and does, in the same order and the same precision, the arithmetic those ops do (a + alpha * b with
// alpha in the parameter's dtype), so the results are bitwise the ones of the composed ops. It takes
// contiguous float32/float64 parameters with a gradient (and buffer) of the same dtype, device and
// layout; anything else (non-contiguous parameters or gradients, mixed dtypes) takes the composed path.
bool fusable(const Tensor& p, const Tensor& grad, const Tensor& buf) {
  auto same = [&](const Tensor& t) {
    return t.dtype() == p.dtype() && t.device() == p.device() && t.is_contiguous() && t.sizes() == p.sizes();
  };
  return (p.dtype() == kFloat32 || p.dtype() == kFloat64) && p.is_contiguous() && same(grad) &&
         (!buf.defined() || same(buf));
}

template <class T>
T* data_or_null(const Tensor& t) {
  return t.defined() ? t.data_ptr<T>() : nullptr;
}

void step_fused(const Tensor& p, const Tensor& grad, const Tensor& buf, const kernel::SgdStep& o) {
  if (p.dtype() == kFloat32)
    kernel::sgd_step(p.data_ptr<float>(), grad.data_ptr<float>(), data_or_null<float>(buf), p.numel(), o);
  else
    kernel::sgd_step(p.data_ptr<double>(), grad.data_ptr<double>(), data_or_null<double>(buf), p.numel(), o);
  p.unsafe_impl()->storage()->bump_version();
  if (buf.defined()) buf.unsafe_impl()->storage()->bump_version();
}

}  // namespace

void sgd_step_(const Tensor& param, const Tensor& grad, Tensor& momentum_buffer, double lr, double momentum,
               double dampening, double weight_decay, bool nesterov) {
  const char* op = "sgd_step_";
  profiling::Scope profile(op);
  if (profile) profile.inputs({param, grad, momentum_buffer});
  detail::check_defined(op, param, "param");
  detail::check_defined(op, grad, "grad");
  COHORT_CHECK(grad.sizes() == param.sizes(), op, ": expected a gradient of the parameter's shape ", param.sizes(),
               ", got ", grad.sizes());
  const bool with_momentum = momentum != 0, first = with_momentum && !momentum_buffer.defined();
  COHORT_CHECK(!with_momentum || first || momentum_buffer.sizes() == param.sizes(), op,
               ": expected a momentum buffer of the parameter's shape ", param.sizes(), ", got ",
               momentum_buffer.sizes());
  NoGradGuard no_grad;
  const Tensor old_buffer = with_momentum && !first ? momentum_buffer : Tensor();
  if (fusable(param, grad, old_buffer)) {
    if (first) momentum_buffer = empty(param.sizes(), param.options());
    step_fused(param, grad, with_momentum ? momentum_buffer : Tensor(),
               {lr, momentum, dampening, weight_decay, nesterov, first});
    return;
  }
  Tensor d = grad;
  if (weight_decay != 0) d = d.add(param, weight_decay);
  if (with_momentum) {
    if (first)
      momentum_buffer = d.detach().clone();
    else
      momentum_buffer.mul_(momentum).add_(d, 1 - dampening);
    d = nesterov ? d.add(momentum_buffer, momentum) : momentum_buffer;
  }
  param.add_(d, -lr);
}

}  // namespace cohort
