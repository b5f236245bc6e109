// What the 1-, 2- and 3-d pools share (src/ops/pooling*.cpp): the input checks, PyTorch's output
// sizes, and the max pools' backward over flat indices.
#pragma once

#include <vector>

#include "cohort/core/tensor.h"

namespace cohort::detail {

// The input with a batch dim (an unbatched [C, *spatial] gets one), after the checks common to the
// pools of `spatial` dims: rank, floating dtype, non-empty channel and spatial dims.
Tensor pool_batched(const char* op, const Tensor& input, int64_t spatial);
// Removes the batch dim again when the user's input had none.
Tensor unbatch_like(const Tensor& out, const Tensor& input, int64_t spatial);

// One value per spatial dim of kernel_size, stride (empty: kernel_size), padding and dilation, and
// the output sizes [N, C, *pooled], checked (PyTorch's pooling_output_shape: ceil_mode drops a last
// window that starts in the right padding).
struct PoolShape {
  std::vector<int64_t> kernel, stride, padding, dilation;
  Shape out_sizes;
};
PoolShape pool_shape(const char* op, const Tensor& x, const Tensor& input, int64_t spatial, IntArrayRef kernel_size,
                     IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode);
// [N, C, *output_size] of an adaptive pool, checked.
Shape adaptive_pool_sizes(const char* op, const Tensor& x, const Tensor& input, int64_t spatial,
                          IntArrayRef output_size);

// dx of x_sizes [N, C, ...]: g added at the flat positions `indices` of each (n, c) volume, recorded
// as `node` so that it is differentiable again (Note [Pooling double backward]).
Tensor max_pool_backward(const char* node, const Tensor& g, const Tensor& indices, const Shape& x_sizes);

}  // namespace cohort::detail
