// Sub-pixel rearrangements, as libtorch's torch::pixel_shuffle / torch::pixel_unshuffle:
//   pixel_shuffle(x, 2)     // [N, 4 C, H, W] -> [N, C, 2 H, 2 W]
//   pixel_unshuffle(y, 2)   // [N, C, 2 H, 2 W] -> [N, 4 C, H, W]
// pixel_shuffle: out[..., c, h r + i, w r + j] = in[..., c r^2 + i r + j, h, w]; pixel_unshuffle is
// its inverse. Inputs have at least 3 dims [*, C, H, W]; any dtype. Composed of reshape and
// permute, so differentiable to any order; the result is a new contiguous tensor.
// Throws cohort::Error naming the op for fewer than 3 dims, a non-positive factor, channels not
// divisible by r^2 (shuffle) or H, W not divisible by r (unshuffle).
#pragma once

#include "cohort/core/tensor.h"

namespace cohort {

Tensor pixel_shuffle(const Tensor& self, int64_t upscale_factor);
Tensor pixel_unshuffle(const Tensor& self, int64_t downscale_factor);

}  // namespace cohort
