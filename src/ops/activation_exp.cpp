// The exponential activations (elu, selu, celu, softplus, mish, log_sigmoid) and softsign and
// tanhshrink, composed of pointwise ops whose backward comes from autograd. Each exponential is
// taken of an argument clamped to where its branch is selected, so the branch where() discards
// never overflows to inf (whose zero gradient times inf would be NaN).
#include <cmath>

#include "cohort/ops/activation.h"
#include "cohort/ops/pointwise.h"
#include "ops/internal.h"

namespace cohort {

namespace {

// SELU's constants (Klambauer et al. 2017), as PyTorch's.
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;

}  // namespace

Tensor elu(const Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  detail::check_defined("elu", self);
  const double a = alpha.to<double>(), s = scale.to<double>(), is = input_scale.to<double>();
  // PyTorch's kernel: x <= 0 ? (exp(x input_scale) - 1) alpha scale : x scale; NaN goes to the
  // negative branch, where the clamp keeps it NaN.
  Tensor negative = (exp(clamp_max(self * is, 0)) - 1) * (a * s);
  return where(self > 0, self * s, negative);
}

Tensor& elu_(Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  self.copy_(elu(self, alpha, scale, input_scale));
  return self;
}

Tensor selu(const Tensor& self) {
  detail::check_defined("selu", self);
  return elu(self, kSeluAlpha, kSeluScale);
}

Tensor& selu_(Tensor& self) {
  self.copy_(selu(self));
  return self;
}

Tensor celu(const Tensor& self, const Scalar& alpha) {
  detail::check_defined("celu", self);
  const double a = alpha.to<double>();
  COHORT_CHECK(a != 0, "celu: alpha must not be 0 (it divides the input), got ", a);
  return elu(self, a, 1, 1 / a);
}

Tensor& celu_(Tensor& self, const Scalar& alpha) {
  self.copy_(celu(self, alpha));
  return self;
}

Tensor softplus(const Tensor& self, const Scalar& beta, const Scalar& threshold) {
  detail::check_defined("softplus", self);
  const double b = beta.to<double>(), t = threshold.to<double>();
  Tensor scaled = self * b;
  // PyTorch's kernel: x beta > threshold ? x : log1p(exp(x beta)) / beta.
  Tensor smooth = log1p(exp(clamp_max(scaled, t))) / b;
  return where(scaled > t, self, smooth);
}

Tensor mish(const Tensor& self) {
  detail::check_defined("mish", self);
  // softplus's threshold changes no value: tanh(x) is 1 in double for x > 20.
  return self * tanh(softplus(self));
}

Tensor& mish_(Tensor& self) {
  self.copy_(mish(self));
  return self;
}

Tensor log_sigmoid(const Tensor& self) {
  detail::check_defined("log_sigmoid", self);
  return neg(softplus(neg(self)));
}

Tensor softsign(const Tensor& self) {
  detail::check_defined("softsign", self);
  return self / (abs(self) + 1);
}

Tensor tanhshrink(const Tensor& self) {
  detail::check_defined("tanhshrink", self);
  return self - tanh(self);
}

}  // namespace cohort
