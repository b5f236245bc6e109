// Layer normalisation as fused row loops (src/ops/cpu/layer_norm.cpp), float32, float64, and
// bfloat16/float16 computed in float32. Arguments are checked by src/ops/layer_norm.cpp.
// M rows (the product of the leading dims), N the row length (the product of normalized_shape):
// x, y, dy, dx contiguous [M, N]; weight, bias and their gradients contiguous [N] or undefined;
// mean and rstd = 1 / sqrt(var + eps) (var biased) contiguous float64 [M].
#pragma once

#include "cohort/core/tensor.h"

namespace cohort::kernel {

// y = (x - mean) * rstd * weight + bias, each row normalised with its own statistics, which are
// written to mean and rstd.
void layer_norm_forward(const Tensor& y, const Tensor& mean, const Tensor& rstd, const Tensor& x,
                        const Tensor& weight, const Tensor& bias, double eps);

// Gradients from dy w.r.t. x (when dx is defined), weight (when dweight is) and bias (when dbias
// is); weight may be undefined (then taken as ones). The column sums of dweight and dbias add rows
// in fixed blocks whose partial sums are combined in a fixed order: the result depends on the
// shape only, never on the number of threads.
void layer_norm_backward(const Tensor& dx, const Tensor& dweight, const Tensor& dbias, const Tensor& dy,
                         const Tensor& x, const Tensor& weight, const Tensor& mean, const Tensor& rstd);

}  // namespace cohort::kernel
