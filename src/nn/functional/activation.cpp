// Activations and dropout as compositions of tensor ops (autograd comes for free).
#include "cohort/nn/functional/activation.h"

#include <cmath>

#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"

namespace cohort::nn::functional {

Tensor relu(const Tensor& x, bool inplace) {
  if (inplace) {
    x.relu_();
    return x;
  }
  return cohort::relu(x);
}

Tensor leaky_relu(const Tensor& x, double negative_slope, bool inplace) {
  Tensor out = where(x > 0, x, x * negative_slope);
  if (inplace) {
    x.copy_(out);
    return x;
  }
  return out;
}

Tensor gelu(const Tensor& x, const std::string& approximate) {
  if (approximate == "tanh") {
    const double k = std::sqrt(2.0 / M_PI);
    return x * 0.5 * (1 + cohort::tanh((x + x * x * x * 0.044715) * k));
  }
  COHORT_CHECK(approximate == "none", "gelu: approximate must be \"none\" or \"tanh\", got \"", approximate, "\"");
  return x * 0.5 * (1 + erf(x * M_SQRT1_2));
}

Tensor silu(const Tensor& x) { return x * cohort::sigmoid(x); }
Tensor sigmoid(const Tensor& x) { return cohort::sigmoid(x); }
Tensor tanh(const Tensor& x) { return cohort::tanh(x); }
Tensor softmax(const Tensor& x, int64_t dim) { return cohort::softmax(x, dim); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return cohort::log_softmax(x, dim); }

Tensor dropout(const Tensor& x, double p, bool training, Generator* generator) {
  COHORT_CHECK(p >= 0 && p <= 1, "dropout: probability has to be between 0 and 1, but got ", p);
  if (!training || p == 0) return x;
  if (p == 1) return x * 0;
  Tensor u = rand(x.sizes(), generator ? *generator : default_generator(), TensorOptions(x.dtype()).device(x.device()));
  Tensor keep = (u >= p).to(x.dtype()) * (1.0 / (1.0 - p));
  return x * keep;
}

}  // namespace cohort::nn::functional
