// Padding ops in libtorch's spelling; `pad` lists (before, after) pairs starting from the last
// dim, as nn::functional::pad takes them. All are differentiable, twice.
//   constant_pad_nd(x, {1, 2}, 0.5)     // last dim: one 0.5 before, two after
//   reflection_pad2d(x, {1, 1, 2, 2})   // W by 1 each side, H by 2, mirrored without the edge
//   replication_pad1d(x, {3, 0})        // the first element repeated 3 times before
#pragma once

#include "cohort/core/tensor.h"

namespace cohort {

// x padded with `value`; a negative amount removes elements from that end. pad has an even
// number of values, at most two per dim of x; throws when a dim would become negative.
Tensor constant_pad_nd(const Tensor& x, IntArrayRef pad, const Scalar& value = 0);
// Mirror padding of the last dim (1d; input [C, W] or [N, C, W]) or last two dims (2d; input
// [C, H, W] or [N, C, H, W], pad {left, right, top, bottom}). Each amount must be smaller than
// its dim's size.
Tensor reflection_pad1d(const Tensor& x, IntArrayRef padding);
Tensor reflection_pad2d(const Tensor& x, IntArrayRef padding);
// Edge padding (the border element repeated); same shapes as reflection, any non-negative amount
// on a non-empty dim.
Tensor replication_pad1d(const Tensor& x, IntArrayRef padding);
Tensor replication_pad2d(const Tensor& x, IntArrayRef padding);

}  // namespace cohort
