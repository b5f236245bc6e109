// The functional activations and dropout: the ops of ops/activation.h, ops/dropout.h and
// ops/pointwise.h, with nn's inplace flags.
#include "cohort/nn/functional/activation.h"

#include "cohort/ops/activation.h"
#include "cohort/ops/dropout.h"
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
  if (inplace) {
    Tensor self = x;
    cohort::leaky_relu_(self, negative_slope);
    return x;
  }
  return cohort::leaky_relu(x, negative_slope);
}

Tensor gelu(const Tensor& x, const std::string& approximate) { return cohort::gelu(x, approximate); }
Tensor silu(const Tensor& x) { return cohort::silu(x); }
Tensor sigmoid(const Tensor& x) { return cohort::sigmoid(x); }
Tensor tanh(const Tensor& x) { return cohort::tanh(x); }
Tensor softmax(const Tensor& x, int64_t dim) { return cohort::softmax(x, dim); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return cohort::log_softmax(x, dim); }

Tensor dropout(const Tensor& x, double p, bool training, Generator* generator) {
  return cohort::dropout(x, p, training, generator);
}

}  // namespace cohort::nn::functional
