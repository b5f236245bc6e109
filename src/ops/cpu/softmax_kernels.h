// Softmax's and log-softmax's backward along one dim (Note [Softmax backward] in cpu/softmax.cpp).
#pragma once

#include "cohort/core/tensor.h"

namespace cohort::kernel {

// Along dim of contiguous g (the gradient of the output) and y (the output), into contiguous gx:
// softmax gx = y (g - sum(g y)), log-softmax gx = g - exp(y) sum(g).
void softmax_backward(const Tensor& gx, const Tensor& g, const Tensor& y, int64_t dim, bool log);

}  // namespace cohort::kernel
