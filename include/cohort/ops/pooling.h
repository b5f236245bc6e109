// 1-, 2- and 3-d pooling, as libtorch's free functions:
//   max_pool2d(x, 2)                                  // [N, C, H, W] -> [N, C, H/2, W/2]
//   avg_pool2d(x, 3, /*stride=*/2, /*padding=*/1, /*ceil_mode=*/false, /*count_include_pad=*/false)
//   adaptive_avg_pool2d(x, {7, 7})                    // -> [N, C, 7, 7]
// The 2-d pools take [N, C, H, W] or unbatched [C, H, W], floating point (1-d: [N, C, L] or [C, L];
// 3-d: [N, C, D, H, W] or [C, D, H, W]). kernel_size, stride, padding and dilation give one value for
// every spatial dim or one per dim; an empty stride is kernel_size.
// Output size per dim: P = floor_or_ceil((H + 2 padding - dilation (k - 1) - 1) / stride) + 1, where
// ceil_mode rounds up but drops a last window that would start in the right padding (PyTorch's rule).
// Padding counts as -inf for max and (with count_include_pad, the default) as zeros in avg's
// divisor. Adaptive pools: window i of an output of size P covers rows floor(i H / P) to
// ceil((i + 1) H / P). Indices are flat positions h * W + w in the input plane, int64 (1-d: l;
// 3-d: (d * H + h) * W + w in the input volume). NaN wins a
// max window, and the index is then the last NaN's (so its gradient goes there), as in PyTorch
// 1.13. Differentiable w.r.t. the input, to any order (create_graph).
// Throws cohort::Error naming the op for: a wrong input rank, an empty channel or spatial dim,
// non-positive kernel_size, stride, dilation or output_size, padding greater than half the kernel, a
// window larger than the padded input, an empty output; TypeError for non-floating inputs.
#pragma once

#include <tuple>

#include "cohort/core/tensor.h"

namespace cohort {

Tensor max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  IntArrayRef dilation = 1, bool ceil_mode = false);
// The output and the index of each window's maximum.
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& self, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {}, IntArrayRef padding = 0,
                                                   IntArrayRef dilation = 1, bool ceil_mode = false);
Tensor avg_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true);
Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size);
// The output and the index of each window's maximum (libtorch returns both here too).
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& self, IntArrayRef output_size);

// 1-d: the 2-d pools over [N, C, 1, L] (same values, indices and gradients).
Tensor max_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  IntArrayRef dilation = 1, bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& self, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {}, IntArrayRef padding = 0,
                                                   IntArrayRef dilation = 1, bool ceil_mode = false);
Tensor avg_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true);
Tensor adaptive_avg_pool1d(const Tensor& self, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& self, IntArrayRef output_size);

// 3-d.
Tensor max_pool3d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  IntArrayRef dilation = 1, bool ceil_mode = false);
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& self, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {}, IntArrayRef padding = 0,
                                                   IntArrayRef dilation = 1, bool ceil_mode = false);
Tensor avg_pool3d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true);
Tensor adaptive_avg_pool3d(const Tensor& self, IntArrayRef output_size);
std::tuple<Tensor, Tensor> adaptive_max_pool3d(const Tensor& self, IntArrayRef output_size);

}  // namespace cohort
