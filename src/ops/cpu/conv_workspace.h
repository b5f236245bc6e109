// A convolution's workspace between forward and backward: what the kernel backend keeps of the
// forward for the weight gradient, opaque to the op (today: a bfloat16 input in the layout oneDNN's
// primitives read it, reordered once; Note [Kept convolution input] in dnnl/conv.cpp).
#pragma once

#include <memory>

#include "ops/cpu/conv_kernels.h"

namespace cohort::kernel {

struct KeptConvInput;  // defined by the backend (dnnl/conv.cpp)

// conv2d_forward, which also returns the input as the forward primitive reordered it, when the
// layer's weight gradient will run on a oneDNN primitive that would reorder it again (bfloat16
// layers on oneDNN's kernels); null otherwise.
std::shared_ptr<KeptConvInput> conv2d_forward_keeping_input(const Tensor& out, const Tensor& in, const Tensor& weight,
                                                            const Tensor& bias, const Conv2dParams& p);

// conv2d_backward whose weight gradient reads `kept` (from conv2d_forward_keeping_input on the same
// input) where its primitive wants that layout, instead of reordering `in`; null: conv2d_backward.
void conv2d_backward(const Tensor& din, const Tensor& dweight, const Tensor& dbias, const Tensor& dout,
                     const Tensor& in, const Tensor& weight, const Conv2dParams& p,
                     const std::shared_ptr<KeptConvInput>& kept);

}  // namespace cohort::kernel
