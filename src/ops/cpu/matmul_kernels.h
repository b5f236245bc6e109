// Matrix products that add to their output (Note [Fused addend] in src/ops/dnnl/matmul.cpp).
// b batch, n rows, k inner, m columns.
#pragma once

#include "cohort/core/tensor.h"

namespace cohort::kernel {

// c = alpha * (a x b) + beta * c for [b, n, k] x [b, k, m] -> [b, n, m]; c contiguous and holding
// the addend on entry, a and b any strides, all of one dtype.
void bmm_accumulate(const Tensor& c, const Tensor& a, const Tensor& b, double alpha, double beta);

}  // namespace cohort::kernel
