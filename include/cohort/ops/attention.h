// Attention's packed input projection: the query, key and value projections by the three row blocks
// of one [3E, E] weight (nn::MultiheadAttention's in_proj_weight), as PyTorch's functional
// _in_projection_packed computes them.
#pragma once

#include <vector>

#include "cohort/core/tensor.h"

namespace cohort {

// q [Lq, E], k [Lk, E], v [Lv, E] (rows of any batch flattened); w [3E, E]; b [3E] or undefined.
// Returns {q w_q^T + b_q, k w_k^T + b_k, v w_v^T + b_v}, w_q, w_k, w_v (and b's parts) the three row
// blocks. One autograd node: each parameter's gradient is one cat of its three blocks (Note [Packed
// input projection] in src/ops/attention.cpp). Differentiable to any order.
std::vector<Tensor> in_projection_packed(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& w,
                                         const Tensor& b = {});

}  // namespace cohort
