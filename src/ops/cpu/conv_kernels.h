// Entry points of the 2-d convolution kernels (oneDNN for float32 in src/ops/dnnl/conv.cpp, plain
// loops for every dtype in src/ops/cpu/conv_reference.cpp). Arguments are already checked by
// src/ops/convolution.cpp; outputs are allocated contiguous; inputs may have any strides.
// N batch, C input channels, O output channels, G groups, H W input, P Q output, kH kW kernel:
//   in [N, C, H, W], weight [O, C / G, kH, kW], bias [O], out [N, O, P, Q].
#pragma once

#include <array>

#include "cohort/core/tensor.h"

namespace cohort::kernel {

struct Conv2dParams {
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> pad_lo{0, 0};    // top, left
  std::array<int64_t, 2> pad_hi{0, 0};    // bottom, right (differs from pad_lo for "same" with even kernels)
  std::array<int64_t, 2> dilation{1, 1};  // PyTorch's meaning: 1 is a dense kernel
  int64_t groups = 1;
};

// out = conv(in, weight) + bias (bias may be undefined).
void conv2d_forward(const Tensor& out, const Tensor& in, const Tensor& weight, const Tensor& bias,
                    const Conv2dParams& p);
// From dout (the gradient w.r.t. the output): din, the gradient w.r.t. the input, and dweight (and
// dbias), each when defined. Both at once share the work on dout (oneDNN: its reorder).
void conv2d_backward(const Tensor& din, const Tensor& dweight, const Tensor& dbias, const Tensor& dout,
                     const Tensor& in, const Tensor& weight, const Conv2dParams& p);

// Plain loops, any dtype: the kernels for non-float32 tensors and the tests' second opinion.
void conv2d_forward_reference(const Tensor& out, const Tensor& in, const Tensor& weight, const Tensor& bias,
                              const Conv2dParams& p);
void conv2d_backward_data_reference(const Tensor& din, const Tensor& dout, const Tensor& weight,
                                    const Conv2dParams& p);
void conv2d_backward_weights_reference(const Tensor& dweight, const Tensor& dbias, const Tensor& in,
                                       const Tensor& dout, const Conv2dParams& p);

}  // namespace cohort::kernel
