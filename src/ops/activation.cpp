// gelu, silu, leaky_relu and glu composed of pointwise and view ops, whose backward comes from
// autograd.
#include "cohort/ops/activation.h"

#include <cmath>
#include <string>

#include "cohort/ops/pointwise.h"
#include "ops/internal.h"
#include "cohort/autograd/trace.h"

namespace cohort {

Tensor gelu(const Tensor& self, std::string_view approximate) {
  trace::OpScope trace("gelu");
  detail::check_defined("gelu", self);
  Tensor out;
  if (approximate == "tanh") {
    const double k = std::sqrt(2.0 / M_PI);
    out = self * 0.5 * (1 + tanh((self + self * self * self * 0.044715) * k));
  } else {
    COHORT_CHECK(approximate == "none", "gelu: approximate must be \"none\" or \"tanh\", got \"",
                 std::string(approximate), "\"");
    out = self * 0.5 * (1 + erf(self * M_SQRT1_2));
  }
  if (trace) trace.record({self}, out, {{"approximate", std::string(approximate)}});
  return out;
}

Tensor silu(const Tensor& self) {
  trace::OpScope trace("silu");
  detail::check_defined("silu", self);
  Tensor out = self * sigmoid(self);
  if (trace) trace.record({self}, out);
  return out;
}

Tensor leaky_relu(const Tensor& self, const Scalar& negative_slope) {
  trace::OpScope trace("leaky_relu");
  detail::check_defined("leaky_relu", self);
  // where() keeps a NaN input (NaN > 0 is false, and NaN * slope is NaN), as PyTorch does.
  Tensor out = where(self > 0, self, self * negative_slope.to<double>());
  if (trace) trace.record({self}, out, {{"negative_slope", negative_slope.to<double>()}});
  return out;
}

Tensor& leaky_relu_(Tensor& self, const Scalar& negative_slope) {
  self.copy_(leaky_relu(self, negative_slope));
  return self;
}

Tensor glu(const Tensor& self, int64_t dim) {
  detail::check_defined("glu", self);
  COHORT_CHECK(self.dim() > 0, "glu: expected a tensor of at least 1 dim (it halves one), got a 0-d tensor");
  const int64_t d = dim < 0 ? dim + self.dim() : dim;
  COHORT_CHECK(d >= 0 && d < self.dim(), "glu: dim ", dim, " out of range for input ", self.sizes());
  const int64_t n = self.size(d);
  COHORT_CHECK(n % 2 == 0, "glu: the halved dim must have an even size, but dim ", dim, " of input ", self.sizes(),
               " has size ", n);
  return self.narrow(d, 0, n / 2) * sigmoid(self.narrow(d, n / 2, n / 2));
}

Tensor& relu_(Tensor& self) {
  self.relu_();
  return self;
}

}  // namespace cohort
