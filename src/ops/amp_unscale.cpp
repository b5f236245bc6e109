// non_finite_check_and_unscale_: the loss scaler's unscale of a list of gradients (optim::GradScaler
// calls it). Kernel: ops/cpu/amp_unscale.cpp.
#include <cmath>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/core/profiling.h"
#include "cohort/ops/optimizer_step.h"
#include "ops/cpu/optimizer_kernels.h"

namespace cohort {

namespace {

// Note [Fused unscale]
// Unscaling composed of tensor ops is three passes per gradient (isfinite, all, mul_) and two
// temporaries. The kernel reads each element once: it tests the exponent bits (all ones: inf or NaN)
// of the value before scaling, as PyTorch's kernel tests the input, and multiplies by inv_scale in
// float32 (PyTorch's inv_scale is a float32 tensor), so an inf stays inf and NaN stays NaN. The test
// is on bits so that the loop vectorises; threads take fixed ranges and OR their flags.
bool check_and_unscale_one(const Tensor& grad, float inv_scale) {
  COHORT_CHECK_AS(TypeError, grad.is_floating_point(), "non_finite_check_and_unscale_: expected floating-point "
                  "gradients, got ", grad.dtype());
  if (grad.numel() == 0) return false;
  if (grad.dtype() == kFloat32 && grad.is_contiguous()) {
    bool found = kernel::check_and_unscale(grad.data_ptr<float>(), grad.numel(), inv_scale);
    if (inv_scale != 1.0f) grad.unsafe_impl()->storage()->bump_version();  // written through a raw pointer
    return found;
  }
  // Any other dtype or layout: the same kernel over a float32 copy. Every float16/bfloat16 value is a
  // float32, and x * inv_scale rounded to float32 then to the narrow type is x * inv_scale rounded
  // once for a power-of-two scale (the usual one); float64 gradients are checked exactly (a float64
  // beyond float32's range is finite) and scaled in float64.
  if (grad.dtype() == kFloat64) {
    Tensor g = grad.contiguous();
    const double* d = g.data_ptr<double>();
    bool found = false;
    for (int64_t i = 0; i < g.numel(); ++i) found |= !std::isfinite(d[i]);
    if (inv_scale != 1.0f) grad.mul_(static_cast<double>(inv_scale));
    return found;
  }
  Tensor g = grad.to(kFloat32).contiguous();
  bool found = kernel::check_and_unscale(g.data_ptr<float>(), g.numel(), inv_scale);
  if (inv_scale != 1.0f) grad.copy_(g);
  return found;
}

}  // namespace

bool non_finite_check_and_unscale_(const std::vector<Tensor>& grads, float inv_scale) {
  profiling::Scope profile("_amp_foreach_non_finite_check_and_unscale_");
  NoGradGuard no_grad;
  bool found = false;
  for (const Tensor& g : grads)
    if (g.defined()) found |= check_and_unscale_one(g, inv_scale);
  return found;
}

}  // namespace cohort
