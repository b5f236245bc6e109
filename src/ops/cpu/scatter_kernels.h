// The scatter kernel (scatter_add's is in kernels.h): shapes and bounds checked by the op.
#pragma once

#include "cohort/core/tensor.h"

namespace cohort::kernel {

// out[.., index[i], ..] = src[i] along dim, for every element i of index (src: out's dtype, any
// strides). Single-threaded, in row-major order of index, so the last write of a repeated index wins.
void scatter(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src);

}  // namespace cohort::kernel
