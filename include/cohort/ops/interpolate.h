// Resampling of [N, C, H, W] images, as ATen's upsample ops (nn::functional::interpolate, in
// nn/functional/vision.h, resolves libtorch's options to these):
//   upsample_nearest2d(x, {64, 64})                                   // -> [N, C, 64, 64]
//   upsample_bilinear2d(x, {224, 224}, /*align_corners=*/false, {}, {}, /*antialias=*/true)
// output_size is {H_out, W_out}, each >= 1. scale_h / scale_w, when given (> 0), are the user's
// scale factors, which PyTorch uses in place of in / out to map output pixels to input pixels.
//   nearest: out[i] = in[min(floor(i * s), in - 1)], s = 1 / scale or in / out (in float32 for
//            float32 inputs, as ATen computes it).
//   bilinear: source x = max(s (i + 0.5) - 0.5, 0), or s i with align_corners (then
//            s = (in - 1) / (out - 1)); the two neighbours weighted by distance.
//   bilinear + antialias: PyTorch's (and PIL's) separable triangle filter stretched by s when
//            downscaling (s > 1), so every input pixel contributes; equal to bilinear when upscaling.
// W is resampled first, then H (as ATen's separable kernels do). Differentiable to any order (the
// backward is the transposed resampling, linear in the gradient). Any float dtype, any strides.
// Throws for a non-4-d or non-float input, an empty image, or an output size < 1.
#pragma once

#include <optional>

#include "cohort/core/array_ref.h"
#include "cohort/core/tensor.h"

namespace cohort {

Tensor upsample_nearest2d(const Tensor& input, IntArrayRef output_size, std::optional<double> scale_h = std::nullopt,
                          std::optional<double> scale_w = std::nullopt);

Tensor upsample_bilinear2d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                           std::optional<double> scale_h = std::nullopt, std::optional<double> scale_w = std::nullopt,
                           bool antialias = false);

}  // namespace cohort
