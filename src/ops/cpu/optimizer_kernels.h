// Entry points of the fused optimizer updates (src/ops/cpu/sgd.cpp) and of the loss scaler's unscale
// (src/ops/cpu/amp_unscale.cpp). Arguments are checked by their ops (src/ops/sgd_step.cpp,
// src/ops/amp_unscale.cpp): contiguous arrays of n elements.
#pragma once

#include <cstdint>

namespace cohort::kernel {

struct SgdStep {
  double lr, momentum, dampening, weight_decay;
  bool nesterov;
  bool first;  // the momentum buffer is new: it starts as the gradient (after weight decay)
};

// PyTorch's SGD update of one parameter p from its gradient, through the momentum buffer buf (null
// when momentum is 0), in one pass; parallel over the elements.
void sgd_step(float* p, const float* grad, float* buf, int64_t n, const SgdStep& step);
void sgd_step(double* p, const double* grad, double* buf, int64_t n, const SgdStep& step);

// Multiplies g[0, n) by inv_scale in place (inv_scale == 1: leaves it alone) and returns whether any
// element was inf or NaN before; parallel over the elements.
bool check_and_unscale(float* g, int64_t n, float inv_scale);

}  // namespace cohort::kernel
