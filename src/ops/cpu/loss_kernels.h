// The negative log-likelihood over class indices as two plain loops (src/ops/cpu/nll_loss.cpp),
// float32 and float64. Arguments are checked by src/ops/nll_loss.cpp, except the targets'
// range, which only the loop sees. N samples, C classes: input [N, C] (any strides), target int64
// [N] (any stride), weight [C] of input's dtype or undefined (every class weighs 1). A sample whose
// target is ignore_index weighs 0.
#pragma once

#include <cstdint>

#include "cohort/core/tensor.h"

namespace cohort::kernel {

struct NllTotals {
  double loss = 0;    // sum over samples of -weight[t] * input[i, t]
  double weight = 0;  // sum over samples of weight[t]: the denominator of the mean
};

// Writes -weight[t] * input[i, t] (0 when ignored) into per_sample (contiguous, N elements, input's
// dtype) when it is defined, and returns the totals (summed in double). Throws IndexError naming
// `op` and the first target outside [0, C) that is not ignore_index.
NllTotals nll_loss_forward(const char* op, const Tensor& per_sample, const Tensor& input, const Tensor& target,
                           const Tensor& weight, int64_t ignore_index);

// grad_input (contiguous [N, C], input's dtype) = -weight[t] * factor * scale[i] at (i, t), 0
// elsewhere, ignored samples included. scale holds N elements (any stride), a single one (used
// for every sample), or is undefined (1).
void nll_loss_backward(const Tensor& grad_input, const Tensor& scale, double factor, const Tensor& target,
                       const Tensor& weight, int64_t ignore_index);

}  // namespace cohort::kernel
