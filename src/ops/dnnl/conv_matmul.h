// bfloat16 convolutions on small maps as oneDNN matmuls on a patch matrix (Note [bfloat16 small-map
// convolutions as matmuls] in conv_matmul.cpp). conv.cpp decides which layers take this route.
#pragma once

#include "ops/cpu/conv_kernels.h"

namespace cohort::kernel {

// Whether a bfloat16 layer's shapes take the matmul route (dweight: the weight or its gradient;
// dy: the output or its gradient): no bias, no groups, output maps of at most 4x4, a patch matrix
// of at most 64 MB. Whether the CPU has bfloat16 kernels is the caller's question.
bool small_map_matmul_fits(const Tensor& dweight, const Tensor& dbias, const Tensor& dy, const Tensor& in,
                           const Conv2dParams& p);

// out = conv(x, w) of contiguous bfloat16 tensors; the patch matrix is moved into *keep_cols when
// that is given (for the weight gradient).
void forward_matmul(const Tensor& out, const Tensor& x, const Tensor& w, const Conv2dParams& p, Tensor* keep_cols);

// dY [N, O, P, Q] (contiguous bfloat16) as [O, N P Q] and as [N P Q, O].
Tensor channels_first(const Tensor& g);
Tensor channels_last(const Tensor& g);

// dweight from gt (channels_first of dY) and the input's patches: kept_cols from the forward, or
// made here when undefined. P, Q: the output map.
void weights_backward_matmul(const Tensor& dweight, const Tensor& gt, const Tensor& in, int64_t P, int64_t Q,
                             const Conv2dParams& p, const Tensor& kept_cols);

// din from gl (channels_last of dY) and the contiguous weight w.
void data_backward_matmul(const Tensor& din, const Tensor& gl, const Tensor& w, int64_t P, int64_t Q,
                          const Conv2dParams& p);

}  // namespace cohort::kernel
