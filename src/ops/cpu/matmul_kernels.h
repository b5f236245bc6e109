// Matrix products that add to their output (Note [Fused addend] in src/ops/dnnl/matmul.cpp).
// b batch, n rows, k inner, m columns.
#pragma once

#include "cohort/core/tensor.h"

namespace cohort::kernel {

// c = alpha * (a x b) + beta * c for [b, n, k] x [b, k, m] -> [b, n, m]; c contiguous and holding
// the addend on entry, a and b any strides, all of one dtype.
void bmm_accumulate(const Tensor& c, const Tensor& a, const Tensor& b, double alpha, double beta);

// c = a x b + bias, the row bias [m] added by the product's kernel (Note [Bias in the product]); c
// contiguous (uninitialised on entry). False, with c untouched, where that path does not apply (not
// float32, a bias that is not a contiguous [m], a large product that runs best on sgemm): the caller
// then copies the addend into c and calls bmm_accumulate.
bool bmm_bias(const Tensor& c, const Tensor& a, const Tensor& b, const Tensor& bias);

}  // namespace cohort::kernel
