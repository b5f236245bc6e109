// Gradient clipping: PyTorch 1.13's clip_grad_norm_ (per-grad norms combined by the same norm) and
// clip_grad_value_.
#include "cohort/nn/utils.h"

#include <algorithm>
#include <cmath>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"

namespace cohort::nn::utils {

double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type,
                       bool error_if_nonfinite) {
  NoGradGuard no_grad;
  std::vector<Tensor> grads;
  for (const Tensor& p : parameters)
    if (p.defined() && p.grad().defined()) grads.push_back(p.grad());
  if (grads.empty()) return 0.0;
  std::vector<Tensor> norms;
  for (const Tensor& g : grads) {
    // Norms in float64 so that float32 grads of many parameters do not lose the total.
    Tensor g64 = g.detach().to(kFloat64);
    norms.push_back(std::isinf(norm_type) ? g64.abs().max() : norm(g64, norm_type));
  }
  Tensor stacked = stack(norms);
  const double total_norm = (std::isinf(norm_type) ? stacked.max() : norm(stacked, norm_type)).item<double>();
  COHORT_CHECK(!error_if_nonfinite || std::isfinite(total_norm), "clip_grad_norm_: the total norm of order ",
               norm_type, " of the gradients is ", total_norm,
               "; hint: pass error_if_nonfinite=false to clip anyway, or look for the NaN/Inf with "
               "DetectAnomalyGuard");
  const double clip_coef = std::min(max_norm / (total_norm + 1e-6), 1.0);
  for (const Tensor& g : grads) g.mul_(clip_coef);
  return total_norm;
}

double clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type, bool error_if_nonfinite) {
  return clip_grad_norm_(std::vector<Tensor>{parameter}, max_norm, norm_type, error_if_nonfinite);
}

void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value) {
  NoGradGuard no_grad;
  for (const Tensor& p : parameters)
    if (p.defined() && p.grad().defined()) p.grad().clamp_(-clip_value, clip_value);
}

void clip_grad_value_(const Tensor& parameter, double clip_value) {
  clip_grad_value_(std::vector<Tensor>{parameter}, clip_value);
}

}  // namespace cohort::nn::utils
