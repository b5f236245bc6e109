// The backward of softmax and log_softmax as ops of their own (libtorch's names), differentiable
// again. softmax and log_softmax themselves are declared in reduction.h.
//
//   Tensor gx = _softmax_backward_data(g, softmax(x, -1), -1, x.dtype());  // the gradient of x
#pragma once

#include "cohort/core/tensor.h"
#include "cohort/ops/reduction.h"

namespace cohort {

// output (y) = softmax(x, dim), grad_output (g) its gradient, of y's shape and dtype: returns
// y * (g - sum(g * y, dim)), the gradient of x, in input_dtype (x's dtype). Throws when the shapes
// or dtypes of g and y differ or dim is out of range.
Tensor _softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim, DType input_dtype);
// output (y) = log_softmax(x, dim): returns g - exp(y) * sum(g, dim), in input_dtype.
Tensor _log_softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim, DType input_dtype);

}  // namespace cohort
