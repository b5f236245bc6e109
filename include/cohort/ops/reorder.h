// Ops that reorder, window or repeat elements: flip, roll, unfold, repeat_interleave. All but
// unfold (a view) return a new tensor, as PyTorch's do; all are differentiable, twice.
//   flip(x, {0, 2})                      // reverse dims 0 and 2
//   roll(x, {1, -2}, {0, 1})             // shift dim 0 by 1 and dim 1 by -2, wrapping around
//   unfold(x, 0, 3, 1)                   // windows of 3 along dim 0, one every element
//   repeat_interleave(x, 2, 0)           // each row twice: [a, b] -> [a, a, b, b]
#pragma once

#include <optional>

#include "cohort/core/tensor.h"

namespace cohort {

// x with the order of each dim in `dims` reversed. Throws IndexError for a dim out of range, and
// an Error for a dim listed twice.
Tensor flip(const Tensor& x, IntArrayRef dims);
// x shifted by shifts[i] along dims[i], elements leaving one end entering at the other. Without
// dims, x is rolled as if flattened (shifts must then have one value) and keeps its shape.
Tensor roll(const Tensor& x, IntArrayRef shifts, IntArrayRef dims = {});
// Windows of `size` elements every `step` along dim, as a view sharing x's storage: dim becomes
// the window count ((x.size(dim) - size) / step + 1) and a last dim of `size` is added (libtorch's
// Tensor::unfold). Throws when size exceeds the dim or step is not positive.
Tensor unfold(const Tensor& x, int64_t dim, int64_t size, int64_t step);
// Each slice along dim repeated `repeats` times in place; without dim, x is flattened first.
// output_size, when given, must equal the result's length along dim. Throws for negative repeats.
Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int64_t> dim = std::nullopt,
                         std::optional<int64_t> output_size = std::nullopt);
// As above with slice i repeated repeats[i] times; repeats is an integer tensor of one value or
// one per slice.
Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<int64_t> dim = std::nullopt,
                         std::optional<int64_t> output_size = std::nullopt);
// The index form: i repeated repeats[i] times, int64. repeats: 1-d integer tensor.
Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> output_size = std::nullopt);

}  // namespace cohort
