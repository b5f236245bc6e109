// Sliding blocks of an image, as ATen's im2col / col2im (nn::functional::unfold and fold resolve
// libtorch's options to these):
//   im2col(x, {3, 3}, /*dilation=*/1, /*padding=*/1, /*stride=*/1)   // [N, C, H, W] -> [N, C 9, L]
//   col2im(cols, {H, W}, {3, 3}, 1, 1, 1)                          // [N, C 9, L] -> [N, C, H, W]
// im2col: column l = p Q + q of the output holds block (p, q): out[n, (c kH + i) kW + j, l] =
// x[n, c, p sH - padH + i dH, q sW - padW + j dW] (0 in the padding), with P x Q blocks,
// P = (H + 2 padH - dH (kH - 1) - 1) / sH + 1. col2im is its adjoint: every column entry is added
// back at its position in an [N, C, H, W] image of output_size (overlaps sum). Inputs may also be
// unbatched ([C, H, W] and [C kH kW, L]). Each argument gives one value for both dims or one per
// dim. Composed of padding, strided slices, stack and sums, so differentiable to any order.
// Throws cohort::Error naming the op for a wrong rank, non-positive kernel_size, dilation or stride,
// negative padding, no block fitting the padded image, channels of col2im's input not divisible by
// kH kW, or L other than the number of blocks of output_size.
#pragma once

#include "cohort/core/tensor.h"

namespace cohort {

Tensor im2col(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
              IntArrayRef stride);
Tensor col2im(const Tensor& self, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride);

}  // namespace cohort
