// Convolution, as libtorch's free functions:
//   conv2d(x, w)                          // stride 1, no padding
//   conv2d(x, w, b, /*stride=*/2, /*padding=*/1)
//   conv2d(x, w, b, 1, "same")            // output size = input size
//   conv1d(x, w, {}, 1, 0, /*dilation=*/2, /*groups=*/4)
// conv2d: input [N, C, H, W] (or unbatched [C, H, W]), weight [O, C / groups, kH, kW], bias [O] or
// undefined -> [N, O, P, Q] with P = (H + 2 padding - dilation (kH - 1) - 1) / stride + 1.
// conv1d: input [N, C, L] (or [C, L]), weight [O, C / groups, k] -> [N, O, L'].
// conv3d: input [N, C, D, H, W] (or [C, D, H, W]), weight [O, C / groups, kD, kH, kW] -> [N, O, P, Q, R]
// (composed of one conv2d, so differentiable through its nodes).
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
//
// Transposed convolution (the gradient of a convolution w.r.t. its input, as a layer), as ATen:
//   conv_transpose2d(x, w, b, /*stride=*/2, /*padding=*/1, /*output_padding=*/1)
// conv_transpose2d: input [N, C, H, W] (or [C, H, W]), weight [C, O / groups, kH, kW], bias [O] or
// undefined -> [N, O, H', W'] with H' = (H - 1) stride - 2 padding + dilation (kH - 1) + output_padding + 1.
// conv_transpose1d: input [N, C, L] (or [C, L]), weight [C, O / groups, k] -> [N, O, L'].
// conv_transpose3d: input [N, C, D, H, W] (or [C, D, H, W]), weight [C, O / groups, kD, kH, kW]
// (composed of one conv_transpose2d).
// output_padding (extra size on one side, to pick among the input sizes a strided convolution maps
// to the same size) must be smaller than stride or dilation, as PyTorch requires. Differentiable
// to any order (node "ConvolutionBackward0"). Throws cohort::Error naming the shapes for a wrong
// rank, input channels other than weight.size(0), weight.size(0) not divisible by groups, a bias
// other than [weight.size(1) * groups], non-positive stride/dilation/groups, negative padding, too
// large an output_padding, an output size below 1; TypeError for mixed or non-floating dtypes.
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
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
              IntArrayRef padding = 0, IntArrayRef dilation = 1, int64_t groups = 1);
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              std::string_view padding, IntArrayRef dilation = 1, int64_t groups = 1);

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
                        IntArrayRef padding = 0, IntArrayRef output_padding = 0, int64_t groups = 1,
                        IntArrayRef dilation = 1);
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
                        IntArrayRef padding = 0, IntArrayRef output_padding = 0, int64_t groups = 1,
                        IntArrayRef dilation = 1);
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias = {}, IntArrayRef stride = 1,
                        IntArrayRef padding = 0, IntArrayRef output_padding = 0, int64_t groups = 1,
                        IntArrayRef dilation = 1);

}  // namespace cohort
