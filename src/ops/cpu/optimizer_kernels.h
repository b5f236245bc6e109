// Entry points of the fused optimizer updates (src/ops/cpu/sgd.cpp). Arguments are checked by
// src/ops/sgd_step.cpp: contiguous arrays of n elements, float32 or float64.
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

}  // namespace cohort::kernel
