// Channel-wise dropout (nn::functional, spelled as libtorch's torch::nn::functional):
//   F::dropout2d(x, 0.5, /*training=*/true)   // x [N, C, H, W] or [C, H, W]
// dropout1d takes [N, C, L] or [C, L], dropout2d [N, C, H, W] or [C, H, W], dropout3d [N, C, D, H, W]
// or [C, D, H, W]: an unbatched input gets a batch dim of 1 (as libtorch 1.13's C++ frontend does;
// Python 1.13 reads a 3-d input to dropout2d as [N, C, L] instead), then cohort::feature_dropout
// (cohort/ops/feature_dropout.h) zeroes whole channels with probability p and scales the rest by
// 1 / (1 - p); the identity when not training. Throws cohort::Error naming the function for another
// rank or p outside [0, 1].
#pragma once

#include "cohort/core/generator.h"
#include "cohort/core/tensor.h"

namespace cohort::nn::functional {

Tensor dropout1d(const Tensor& x, double p = 0.5, bool training = true, Generator* generator = nullptr);
Tensor dropout2d(const Tensor& x, double p = 0.5, bool training = true, Generator* generator = nullptr);
Tensor dropout3d(const Tensor& x, double p = 0.5, bool training = true, Generator* generator = nullptr);

}  // namespace cohort::nn::functional
