// Batch normalisation as fused plain loops (src/ops/cpu/batch_norm.cpp), float32 and float64.
// Arguments are checked by src/ops/batch_norm.cpp. N batch, C channels, S the product of
// the remaining dims: x [N, C, S] (any strides), weight/bias/running stats [C] or undefined.
// Per channel statistics are kept in double: mean and invstd = 1 / sqrt(var + eps), float64 [C].
#pragma once

#include "cohort/core/tensor.h"

namespace cohort::kernel {

// training: normalise with the batch mean and biased variance, and (when the running stats are
// defined) update them: running = (1 - momentum) running + momentum batch, the variance unbiased.
// Otherwise normalise with the running stats. out is contiguous [N, C, S]; mean/invstd receive the
// statistics used.
void batch_norm_forward(const Tensor& out, const Tensor& mean, const Tensor& invstd, const Tensor& x,
                        const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                        const Tensor& running_var, bool training, double momentum, double eps);

// Gradients from dy (any strides) w.r.t. x (when dx is defined), weight and bias (when defined);
// `training` says whether mean/invstd were batch statistics (then they depend on x).
void batch_norm_backward(const Tensor& dx, const Tensor& dweight, const Tensor& dbias, const Tensor& dy,
                         const Tensor& x, const Tensor& weight, const Tensor& mean, const Tensor& invstd,
                         bool training);

// Per-channel mean and sum of squared deviations (m2, so the biased variance is m2 / (N S)) of a
// contiguous x, both float64 [C]: what DataParallel merges into exact running statistics.
void batch_norm_stats(const Tensor& mean, const Tensor& m2, const Tensor& x);

}  // namespace cohort::kernel
