// Activations composed of pointwise ops, as libtorch's free functions (relu, sigmoid and tanh are
// kernels of their own, in ops/pointwise.h):
//   gelu(x)                 // x Phi(x), Phi the standard normal CDF
//   gelu(x, "tanh")         // the tanh approximation 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
//   silu(x)                 // x sigmoid(x)
//   leaky_relu(x, 0.2)      // x where x > 0, else slope x (NaN stays NaN)
// Differentiable w.r.t. the input, to any order. The in-place forms write into `self` and return it.
// Throws cohort::Error for an unknown gelu approximation.
#pragma once

#include <string_view>

#include "cohort/core/scalar.h"
#include "cohort/core/tensor.h"

namespace cohort {

Tensor gelu(const Tensor& self, std::string_view approximate = "none");
Tensor silu(const Tensor& self);
Tensor leaky_relu(const Tensor& self, const Scalar& negative_slope = 0.01);
Tensor& leaky_relu_(Tensor& self, const Scalar& negative_slope = 0.01);
Tensor& relu_(Tensor& self);

}  // namespace cohort
