// Elementwise ops with broadcasting (numpy rules) and PyTorch's type promotion. Shapes that do not
// broadcast throw with both shapes: "add: cannot broadcast [2, 3] with [4, 5]".
#pragma once

#include <optional>

#include "cohort/core/tensor.h"

namespace cohort {

// Binary arithmetic. alpha scales `b` (a + alpha * b). div is true division (ints give floats).
Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha = 1);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Scalar& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Scalar& b);
Tensor pow(const Tensor& a, const Tensor& exponent);
Tensor pow(const Tensor& a, const Scalar& exponent);
Tensor pow(const Scalar& a, const Tensor& exponent);
// Elementwise max and min; NaN if either is NaN (PyTorch's maximum/minimum, not fmax/fmin).
// Python's modulo, a - b floor(a / b): the result has the divisor's sign (remainder(-3, 5) is 2), as
// PyTorch's remainder and Tensor % b. Any non-bool dtype; an integer divisor of 0 is an error.
Tensor remainder(const Tensor& a, const Tensor& b);
Tensor remainder(const Tensor& a, const Scalar& b);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor minimum(const Tensor& a, const Tensor& b);
// libtorch's two-tensor overloads of max and min are maximum and minimum.
inline Tensor max(const Tensor& a, const Tensor& b) { return maximum(a, b); }
inline Tensor min(const Tensor& a, const Tensor& b) { return minimum(a, b); }

// `out=` forms: write into `out`, which is resized when its shape differs and must be able to hold
// the result type. Return out.
Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha = 1);
Tensor& mul_out(Tensor& out, const Tensor& a, const Tensor& b);
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b);

// Unary math; integer inputs of the float-valued ones are promoted to the default dtype.
Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);
Tensor abs(const Tensor& x);
Tensor sign(const Tensor& x);
Tensor relu(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor square(const Tensor& x);
Tensor reciprocal(const Tensor& x);
Tensor sin(const Tensor& x);
Tensor cos(const Tensor& x);
Tensor erf(const Tensor& x);
Tensor log1p(const Tensor& x);
// NaN and inf follow IEEE/C99 (exp(-inf) = 0, log(0) = -inf, log(-1) = NaN, sqrt(-inf) = NaN), as in
// PyTorch; sign(NaN) is 0 and relu(NaN) is NaN and relu(-0) is -0 (PyTorch 1.13).
//
// clamp: min(max(x, min), max), so max wins where min > max. A NaN in x stays NaN. A NaN scalar
// bound makes every element NaN when both bounds are given, and for clamp_min/clamp_max; as clamp's
// only bound it leaves x unchanged (PyTorch 1.13's rules). Integer x with a floating bound gives the
// default float dtype. No gradient flows where x is outside the bounds, is NaN or meets a NaN bound.
Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
Tensor clamp_min(const Tensor& x, const Scalar& min);
Tensor clamp_max(const Tensor& x, const Scalar& max);
// Tensor bounds (broadcast with x, type-promoted): maximum(x, min) then minimum(.., max), so a NaN in
// x or in either bound gives NaN there. Gradients as PyTorch's: x where min <= x <= max, min where
// x < min < max, max where x > max or max < min.
//   clamp(x, lo, std::nullopt) == clamp_min(x, lo)
Tensor clamp(const Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max = std::nullopt);
Tensor clamp_min(const Tensor& x, const Tensor& min);
Tensor clamp_max(const Tensor& x, const Tensor& max);
Tensor& exp_out(Tensor& out, const Tensor& x);
Tensor& relu_out(Tensor& out, const Tensor& x);
// ReLU's backward in one pass (libtorch's name): 0 where self <= threshold, else grad_output, so a
// NaN self passes the gradient (as PyTorch). grad_output and self: one floating dtype,
// broadcastable shapes. relu's backward is threshold_backward(g, relu(x), 0).
Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold);

// Comparisons and logic, giving bool tensors.
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor eq(const Tensor& a, const Scalar& b);
Tensor ne(const Tensor& a, const Scalar& b);
Tensor lt(const Tensor& a, const Scalar& b);
Tensor le(const Tensor& a, const Scalar& b);
Tensor gt(const Tensor& a, const Scalar& b);
Tensor ge(const Tensor& a, const Scalar& b);
Tensor logical_not(const Tensor& x);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_or(const Tensor& a, const Tensor& b);
Tensor isnan(const Tensor& x);
Tensor isfinite(const Tensor& x);

// condition ? a : b, all three broadcast together; condition must be bool.
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& condition, const Tensor& a, const Scalar& b);
Tensor where(const Tensor& condition, const Scalar& a, const Tensor& b);
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value);

// |a - b| <= atol + rtol * |b| everywhere (after broadcasting); NaNs equal only with equal_nan.
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8, bool equal_nan = false);
// Same shape and the same values (dtypes may differ).
bool equal(const Tensor& a, const Tensor& b);

// The dtype an op on these operands computes in (PyTorch's result_type).
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, const Scalar& b);

}  // namespace cohort
