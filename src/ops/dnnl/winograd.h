// cohort's own Winograd F(4x4, 3x3) float32 convolution: forward, backward data and backward weights
// (Note [Own Winograd] in winograd.cpp). conv.cpp chooses it (Note [Winograd convolution] there).
// Tensors are contiguous float32 nchw / oihw, as the kernel entry points in conv_kernels.h.
#pragma once

#include "ops/cpu/conv_kernels.h"

namespace cohort::kernel::winograd {

// Whether the layer is one Winograd F(4x4, 3x3) computes: a 3x3 kernel, stride 1, no dilation. Any
// padding (it only moves where the tiles read), any groups (a product per group).
bool fits(const Tensor& weight, const Conv2dParams& p);

// The number of 4x4 output tiles of an output of N x P x Q pixels (per channel).
int64_t tile_count(int64_t N, int64_t P, int64_t Q);

// out = conv(in, weight) + bias (bias may be undefined).
void forward(const Tensor& out, const Tensor& in, const Tensor& weight, const Tensor& bias, const Conv2dParams& p);

// din = the gradient w.r.t. the input (undefined: not computed).
void backward_data(const Tensor& din, const Tensor& dout, const Tensor& weight, const Conv2dParams& p);

// dweight (and dbias when defined) from the input and dout.
void backward_weights(const Tensor& dweight, const Tensor& dbias, const Tensor& in, const Tensor& dout,
                      const Conv2dParams& p);

}  // namespace cohort::kernel::winograd
