// gelu, silu and leaky_relu composed of pointwise ops, whose backward comes from autograd.
#include "cohort/ops/activation.h"

#include <cmath>
#include <string>

#include "cohort/ops/pointwise.h"
#include "ops/internal.h"

namespace cohort {

Tensor gelu(const Tensor& self, std::string_view approximate) {
  detail::check_defined("gelu", self);
  if (approximate == "tanh") {
    const double k = std::sqrt(2.0 / M_PI);
    return self * 0.5 * (1 + tanh((self + self * self * self * 0.044715) * k));
  }
  COHORT_CHECK(approximate == "none", "gelu: approximate must be \"none\" or \"tanh\", got \"", std::string(approximate),
               "\"");
  return self * 0.5 * (1 + erf(self * M_SQRT1_2));
}

Tensor silu(const Tensor& self) {
  detail::check_defined("silu", self);
  return self * sigmoid(self);
}

Tensor leaky_relu(const Tensor& self, const Scalar& negative_slope) {
  detail::check_defined("leaky_relu", self);
  // where() keeps a NaN input (NaN > 0 is false, and NaN * slope is NaN), as PyTorch does.
  return where(self > 0, self, self * negative_slope.to<double>());
}

Tensor& leaky_relu_(Tensor& self, const Scalar& negative_slope) {
  self.copy_(leaky_relu(self, negative_slope));
  return self;
}

Tensor& relu_(Tensor& self) {
  self.relu_();
  return self;
}

}  // namespace cohort
