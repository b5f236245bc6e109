// The LSTM's time loop for one layer and one direction, as one autograd node (what nn::LSTM runs for
// a padded batch without a projection).
#pragma once

#include <vector>

#include "cohort/core/tensor.h"

namespace cohort {

// xp [T * N, 4H]: every step's input projection (x w_ih^T + b_ih), step t's rows at t * N; h0, c0
// [N, H]; w_hh [4H, H]; b_hh [4H] or undefined. Gates in PyTorch's order i, f, g, o. Steps run
// t = 0 .. T-1, or T-1 .. 0 when `reverse`. Returns {out [T * N, H] (step t's h at rows t * N),
// h_n [N, H], c_n [N, H]}. float32 and float64. Differentiable to any order: the backward is fused
// kernels and one matmul per step, plus one matmul for w_hh's gradient over all steps; under
// create_graph it is composed of ops instead.
std::vector<Tensor> lstm_layer(const Tensor& xp, const Tensor& h0, const Tensor& c0, const Tensor& w_hh,
                               const Tensor& b_hh, bool reverse);

}  // namespace cohort
