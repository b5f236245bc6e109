// Entry points of the 2-d pooling kernels, plain loops for every floating dtype: the max pool's forward
// in src/ops/cpu/max_pool.cpp, everything else in src/ops/cpu/pooling.cpp. Arguments are already checked by src/ops/pooling.cpp; outputs are
// allocated contiguous; inputs may have any strides.
// N batch, C channels, H W input, P Q output, kH kW window: in [N, C, H, W], out [N, C, P, Q].
#pragma once

#include <array>

#include "cohort/core/tensor.h"

namespace cohort::kernel {

struct Pool2dParams {
  std::array<int64_t, 2> kernel{1, 1};
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0};   // both sides; ceil_mode's extra windows read past it
  std::array<int64_t, 2> dilation{1, 1};  // max pooling only
  bool count_include_pad = true;          // avg pooling only
};

// Max pooling. Returns what the backward needs: the argmax indices (int64 [N, C, P, Q], flat h * W + w
// as PyTorch's).
Tensor max_pool2d_forward(const Tensor& out, const Tensor& in, const Pool2dParams& p);
// din = the gradient scattered to the argmax of each window (also the adaptive max pool's backward).
void max_pool2d_backward(const Tensor& din, const Tensor& dout, const Tensor& indices);
void avg_pool2d_forward(const Tensor& out, const Tensor& in, const Pool2dParams& p);
void avg_pool2d_backward(const Tensor& din, const Tensor& dout, const Pool2dParams& p);

// The max pool's forward as the plainest loops: the tests' second opinion for max_pool2d_forward.
void max_pool2d_forward_reference(const Tensor& out, const Tensor& indices, const Tensor& in, const Pool2dParams& p);

// Adaptive pools (out [N, C, P, Q] chooses the windows: rows floor(i H / P) to ceil((i + 1) H / P)).
void adaptive_avg_pool2d_forward(const Tensor& out, const Tensor& in);
void adaptive_avg_pool2d_backward(const Tensor& din, const Tensor& dout);
void adaptive_max_pool2d_forward(const Tensor& out, const Tensor& indices, const Tensor& in);

// 3-d pools (src/ops/cpu/pooling3d.cpp), plain loops: in [N, C, D, H, W], out [N, C, P, Q, R].
// Indices are flat (d * H + h) * W + w in the input volume; the max pools' backward is
// max_pool2d_backward on [N, C, D * H, W] views.
struct Pool3dParams {
  std::array<int64_t, 3> kernel{1, 1, 1};
  std::array<int64_t, 3> stride{1, 1, 1};
  std::array<int64_t, 3> padding{0, 0, 0};
  std::array<int64_t, 3> dilation{1, 1, 1};  // max pooling only
  bool count_include_pad = true;             // avg pooling only
};
void max_pool3d_forward(const Tensor& out, const Tensor& indices, const Tensor& in, const Pool3dParams& p);
void avg_pool3d_forward(const Tensor& out, const Tensor& in, const Pool3dParams& p);
void avg_pool3d_backward(const Tensor& din, const Tensor& dout, const Pool3dParams& p);
void adaptive_avg_pool3d_forward(const Tensor& out, const Tensor& in);
void adaptive_avg_pool3d_backward(const Tensor& din, const Tensor& dout);
void adaptive_max_pool3d_forward(const Tensor& out, const Tensor& indices, const Tensor& in);

}  // namespace cohort::kernel
