// Convolution, as libtorch's free functions:
//   conv2d(x, w)                          // stride 1, no padding
//   conv2d(x, w, b, /*stride=*/2, /*padding=*/1)
//   conv2d(x, w, b, 1, "same")            // output size = input size
//   conv1d(x, w, {}, 1, 0, /*dilation=*/2, /*groups=*/4)
// conv2d: input [N, C, H, W] (or unbatched [C, H, W]), weight [O, C / groups, kH, kW], bias [O] or
// undefined -> [N, O, P, Q] with P = (H + 2 padding - dilation (kH - 1) - 1) / stride + 1.
// conv1d: input [N, C, L] (or [C, L]), weight [O, C / groups, k] -> [N, O, L'].
// stride, padding and dilation give one value for every spatial dim or one per dim. Padding "valid"
// is none; "same" keeps the size (stride 1 only; an even effective kernel pads one more at the end,
// as PyTorch does).
// float32 runs on oneDNN (or cohort's Winograd, see ops/backend.h), other floating dtypes on plain
// loops. Differentiable w.r.t. input, weight and bias (node "ConvolutionBackward0"), to any order:
// under create_graph the backward records convolutions again.
// Throws cohort::Error naming the op and the shapes for a wrong input rank, channels that do not
// match weight * groups, out channels not divisible by groups, a kernel larger than the padded
// input, non-positive stride/dilation/groups, negative padding, "same" with stride > 1, a padding
// string other than "same"/"valid"; TypeError for mixed or non-floating dtypes.
#pragma once

#include <string_view>

#include "cohort/core/tensor.h"

namespace cohort {

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
              IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              std::string_view padding, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
              IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              std::string_view padding, IntArrayRef dilation = 1, int64_t groups = 1);

}  // namespace cohort
