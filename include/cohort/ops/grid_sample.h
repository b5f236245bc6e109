// Spatial transformers, as ATen's affine_grid_generator and grid_sampler (nn::functional::affine_grid
// and grid_sample resolve libtorch's options to these):
//   Tensor grid = affine_grid_generator(theta, {N, C, H, W}, /*align_corners=*/false);  // [N, H, W, 2]
//   Tensor out = grid_sampler(x, grid, /*interpolation_mode=*/0, /*padding_mode=*/0, false);
// affine_grid_generator: theta [N, 2, 3] and size [N, C, H, W] (or theta [N, 3, 4] and size
// [N, C, D, H, W]) -> the grid [N, H, W, 2] (or [N, D, H, W, 3]) of theta applied to each output
// pixel's normalised (x, y[, z], 1), where x runs over linspace(-1, 1, W), scaled by (W - 1) / W
// unless align_corners (pixel centres, as PyTorch).
// grid_sampler: input [N, C, H, W], grid [N, Ho, Wo, 2] of (x, y) in [-1, 1] -> [N, C, Ho, Wo].
// A coordinate maps to pixels as ((x + 1) / 2) (W - 1) with align_corners, else ((x + 1) W - 1) / 2;
// interpolation_mode 0 is bilinear, 1 nearest (ties to even, as nearbyint); padding_mode 0 reads
// zeros outside the input, 1 clamps to the border, 2 reflects at the border (about the edge pixels'
// centres with align_corners, else about their outer edges). Both are composed of existing ops, so
// differentiable to any order w.r.t. theta, input and grid (nearest: no gradient w.r.t. the grid).
// A NaN or infinite grid value is not supported (its sample is unspecified).
// Throws cohort::Error naming the op for wrong ranks or sizes, a batch or channel mismatch, an
// unknown mode, a non-positive size; TypeError for non-floating or mixed dtypes, and for bfloat16
// and float16 grid_sampler inputs (PyTorch 1.13 has no such CPU kernel).
#pragma once

#include "cohort/core/tensor.h"

namespace cohort {

Tensor affine_grid_generator(const Tensor& theta, IntArrayRef size, bool align_corners);
Tensor grid_sampler(const Tensor& input, const Tensor& grid, int64_t interpolation_mode, int64_t padding_mode,
                    bool align_corners);

}  // namespace cohort
