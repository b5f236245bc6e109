// Activations composed of pointwise ops, as libtorch's free functions (relu, sigmoid and tanh are
// kernels of their own, in ops/pointwise.h):
//   gelu(x)                 // x Phi(x), Phi the standard normal CDF
//   gelu(x, "tanh")         // the tanh approximation 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
//   silu(x)                 // x sigmoid(x)
//   leaky_relu(x, 0.2)      // x where x > 0, else slope x (NaN stays NaN)
//   elu(x, alpha)           // x where x > 0, else alpha (exp(x) - 1); scale and input_scale as ATen's
//   selu(x)                 // elu with SELU's fixed alpha and scale
//   celu(x, alpha)          // max(0, x) + min(0, alpha (exp(x / alpha) - 1)); alpha != 0
//   softplus(x, beta, threshold)  // log(1 + exp(beta x)) / beta, x itself where beta x > threshold
//   mish(x)                 // x tanh(softplus(x))
//   log_sigmoid(x)          // log(sigmoid(x)) = -softplus(-x), stable both ways
//   hardtanh(x, lo, hi)     // clamp(x, lo, hi); relu6(x) is hardtanh(x, 0, 6)
//   hardsigmoid(x)          // relu6(x + 3) / 6;  hardswish(x) = x relu6(x + 3) / 6
//   prelu(x, w)             // x where x > 0, else w x; w [C] along dim 1 of x, or one value
//   softsign(x), tanhshrink(x)                 // x / (1 + |x|), x - tanh(x)
//   softshrink(x, l), hardshrink(x, l)         // x -+ l beyond +-l else 0; x beyond +-l else 0
//   threshold(x, th, value) // x where x > th, else value
//   glu(x, dim)             // a sigmoid(b), a and b the two halves of x along dim (its size even)
//   rrelu(x, lower, upper, training)  // x where x > 0, else slope x: slope (lower + upper) / 2, or in
//                           // training drawn uniformly from [lower, upper] per element (from `generator`)
// Values, NaN and inf as PyTorch 1.13's kernels (hardswish(-inf) and softsign(+-inf) are NaN, softshrink(NaN)
// is 0). Gradients are PyTorch's away from the kinks; at them, and at NaN, the piecewise ones follow
// PyTorch's backward kernels: hardtanh, relu6 and hardsigmoid pass no gradient at their bounds,
// hardswish has slope x / 3 + 1 / 2 on the closed [-3, 3], threshold, hardtanh, hardshrink and
// hardswish pass it at NaN (softshrink does not; PyTorch's does), elu gives NaN there.
// Differentiable w.r.t. the input (and prelu's weight), to any order. The in-place forms write
// into `self` and return it.
// Throws cohort::Error for an unknown gelu approximation, celu with alpha 0, softshrink with lambd
// below 0, glu of a 0-d tensor or along a dim of odd size, and prelu with a weight of more than one
// dim or whose size is neither 1 nor the channel count (x.size(1); 1 for x of fewer than 2 dims).
#pragma once

#include <string_view>

#include "cohort/core/generator.h"
#include "cohort/core/scalar.h"
#include "cohort/core/tensor.h"

namespace cohort {

Tensor gelu(const Tensor& self, std::string_view approximate = "none");
Tensor silu(const Tensor& self);
Tensor leaky_relu(const Tensor& self, const Scalar& negative_slope = 0.01);
Tensor& leaky_relu_(Tensor& self, const Scalar& negative_slope = 0.01);
Tensor& relu_(Tensor& self);
Tensor glu(const Tensor& self, int64_t dim = -1);

// The exponential family (activation_exp.cpp).
Tensor elu(const Tensor& self, const Scalar& alpha = 1, const Scalar& scale = 1, const Scalar& input_scale = 1);
Tensor& elu_(Tensor& self, const Scalar& alpha = 1, const Scalar& scale = 1, const Scalar& input_scale = 1);
Tensor selu(const Tensor& self);
Tensor& selu_(Tensor& self);
Tensor celu(const Tensor& self, const Scalar& alpha = 1.0);
Tensor& celu_(Tensor& self, const Scalar& alpha = 1.0);
Tensor softplus(const Tensor& self, const Scalar& beta = 1, const Scalar& threshold = 20);
Tensor mish(const Tensor& self);
Tensor& mish_(Tensor& self);
Tensor log_sigmoid(const Tensor& self);
Tensor softsign(const Tensor& self);
Tensor tanhshrink(const Tensor& self);

// The piecewise-linear family (activation_piecewise.cpp).
Tensor hardtanh(const Tensor& self, const Scalar& min_val = -1, const Scalar& max_val = 1);
Tensor& hardtanh_(Tensor& self, const Scalar& min_val = -1, const Scalar& max_val = 1);
Tensor relu6(const Tensor& self);
Tensor& relu6_(Tensor& self);
Tensor hardsigmoid(const Tensor& self);
Tensor& hardsigmoid_(Tensor& self);
Tensor hardswish(const Tensor& self);
Tensor& hardswish_(Tensor& self);
Tensor prelu(const Tensor& self, const Tensor& weight);
Tensor softshrink(const Tensor& self, const Scalar& lambd = 0.5);
Tensor hardshrink(const Tensor& self, const Scalar& lambd = 0.5);
Tensor threshold(const Tensor& self, const Scalar& threshold, const Scalar& value);
Tensor& threshold_(Tensor& self, const Scalar& threshold, const Scalar& value);
Tensor rrelu(const Tensor& self, const Scalar& lower = 0.125, const Scalar& upper = 1.0 / 3, bool training = false,
             Generator* generator = nullptr);
Tensor& rrelu_(Tensor& self, const Scalar& lower = 0.125, const Scalar& upper = 1.0 / 3, bool training = false,
               Generator* generator = nullptr);

}  // namespace cohort
