// Padding ops in libtorch's spelling; `pad` lists (before, after) pairs starting from the last
// dim, as nn::functional::pad takes them. All are differentiable, twice.
//   constant_pad_nd(x, {1, 2}, 0.5)     // last dim: one 0.5 before, two after
//   reflection_pad2d(x, {1, 1, 2, 2})   // W by 1 each side, H by 2, mirrored without the edge
//   replication_pad1d(x, {3, 0})        // the first element repeated 3 times before
//   pad(x, {1, 1}, "circular")           // wraps around: the last element before, the first after
#pragma once

#include <optional>
#include <string_view>

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
Tensor reflection_pad3d(const Tensor& x, IntArrayRef padding);  // [C, D, H, W] or [N, C, D, H, W]
// Edge padding (the border element repeated); same shapes as reflection, any non-negative amount
// on a non-empty dim.
Tensor replication_pad1d(const Tensor& x, IntArrayRef padding);
Tensor replication_pad2d(const Tensor& x, IntArrayRef padding);
Tensor replication_pad3d(const Tensor& x, IntArrayRef padding);

// ATen's pad: mode "constant" (value, default 0), "reflect", "replicate" or "circular" (each end
// continues from the other; amounts at most the dim's size). The non-constant modes pad the last
// pad.size() / 2 dims (1 to 3) of an input with one or two more dims than that.
Tensor pad(const Tensor& x, IntArrayRef pad, std::string_view mode = "constant",
           std::optional<double> value = std::nullopt);

}  // namespace cohort
