// The piecewise activations (hardtanh, relu6, hardsigmoid, hardswish, prelu, the shrinks and
// threshold), composed of where() and pointwise ops so that autograd gives their gradients. Where
// PyTorch's backward kernel differs from what the plain composition would give (at the bounds,
// at NaN), the value outside the open interval is taken detached, so the gradient there is
// PyTorch's. No piece multiplies a gradient by a value another piece is chosen for, so an infinite
// or NaN input sends no NaN into the gradients of the others.
#include "cohort/ops/activation.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "ops/internal.h"

namespace cohort {

Tensor hardtanh(const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  detail::check_defined("hardtanh", self);
  // The values are clamp's; the gradient passes strictly inside (min, max) and at NaN (PyTorch's
  // hardtanh_backward), where clamp's also passes at the bounds.
  Tensor outside = logical_or(self <= min_val, self >= max_val);
  return where(outside, clamp(self, min_val, max_val).detach(), self);
}

Tensor& hardtanh_(Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  self.copy_(hardtanh(self, min_val, max_val));
  return self;
}

Tensor relu6(const Tensor& self) { return hardtanh(self, 0, 6); }

Tensor& relu6_(Tensor& self) { return hardtanh_(self, 0, 6); }

Tensor hardsigmoid(const Tensor& self) {
  detail::check_defined("hardsigmoid", self);
  // Gradient 1/6 strictly inside (-3, 3), none at the bounds or at NaN (PyTorch's backward).
  Tensor inside = logical_and(self > -3, self < 3);
  Tensor shifted = self + 3;
  return where(inside, shifted / 6, (clamp(shifted, 0, 6) / 6).detach());
}

Tensor& hardsigmoid_(Tensor& self) {
  self.copy_(hardsigmoid(self));
  return self;
}

Tensor hardswish(const Tensor& self) {
  detail::check_defined("hardswish", self);
  // PyTorch's kernel x min(max(x + 3, 0), 6) / 6 piece by piece: x 0 below -3 (-0, and NaN for
  // -inf), x (x + 3) / 6 on [-3, 3] (slope x / 3 + 1 / 2 at both ends, as its backward), x above
  // and at NaN (slope 1).
  // The middle piece is computed from x where x is in [-3, 3] and from 0 elsewhere, so that an
  // infinite or NaN x, which another piece takes, sends no NaN into its zero gradient.
  Tensor in_middle = logical_and(self >= -3, self <= 3);
  Tensor m = where(in_middle, self, 0);
  return where(self < -3, self * 0, where(in_middle, m * (m + 3) / 6, self));
}

Tensor& hardswish_(Tensor& self) {
  self.copy_(hardswish(self));
  return self;
}

Tensor prelu(const Tensor& self, const Tensor& weight) {
  detail::check_defined("prelu", self);
  detail::check_defined("prelu", weight, "weight");
  COHORT_CHECK(weight.dim() <= 1, "prelu: weight must be a scalar or 1-d tensor, got ", weight.dim(), " dims ",
               weight.sizes());
  const int64_t channels = self.dim() >= 2 ? self.size(1) : 1;
  const int64_t n = weight.numel();
  COHORT_CHECK(n == 1 || n == channels, "prelu: weight must have 1 value or one per channel (dim 1 of input ",
               self.sizes(), ", ", channels, "), got ", n);
  // One weight for every element, or one per channel broadcast over the dims after 1.
  Shape shape(static_cast<size_t>(std::max<int64_t>(self.dim() - 1, 0)), 1);
  if (n > 1) shape[0] = n;
  Tensor w = n == 1 ? weight.reshape({}) : weight.reshape(shape);
  // x times its slope, 1 or w: where() routes w's gradient only from x <= 0 (x w with where() around
  // it would send 0 * inf = NaN to w from an infinite x > 0).
  return self * where(self > 0, 1, w);
}

Tensor softshrink(const Tensor& self, const Scalar& lambd) {
  detail::check_defined("softshrink", self);
  const double l = lambd.to<double>();
  COHORT_CHECK(l >= 0, "softshrink: lambd must be at least 0, got ", l);
  // NaN lands in the middle, 0 (PyTorch 1.13).
  return where(self > l, self - l, where(self < -l, self + l, 0));
}

Tensor hardshrink(const Tensor& self, const Scalar& lambd) {
  detail::check_defined("hardshrink", self);
  const double l = lambd.to<double>();
  return where(logical_and(self >= -l, self <= l), 0, self);
}

Tensor threshold(const Tensor& self, const Scalar& threshold, const Scalar& value) {
  detail::check_defined("threshold", self);
  return where(self <= threshold, value, self);
}

Tensor& threshold_(Tensor& self, const Scalar& threshold, const Scalar& value) {
  self.copy_(cohort::threshold(self, threshold, value));
  return self;
}

Tensor rrelu(const Tensor& self, const Scalar& lower, const Scalar& upper, bool training, Generator* generator) {
  detail::check_defined("rrelu", self);
  const double lo = lower.to<double>(), hi = upper.to<double>();
  COHORT_CHECK(lo <= hi, "rrelu: lower must not exceed upper, got lower=", lo, " and upper=", hi);
  if (!training) return leaky_relu(self, (lo + hi) / 2);
  // One slope per element where x <= 0 (PyTorch's noise; 1 elsewhere and at NaN), a constant for
  // autograd: the gradient is the slope.
  Tensor u = generator ? rand(self.sizes(), *generator, self.options()) : rand_like(self);
  Tensor slope = where(self <= 0, u * (hi - lo) + lo, 1);
  return self * slope;
}

Tensor& rrelu_(Tensor& self, const Scalar& lower, const Scalar& upper, bool training, Generator* generator) {
  self.copy_(rrelu(self, lower, upper, training, generator));
  return self;
}

}  // namespace cohort
