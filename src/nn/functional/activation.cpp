// The functional activations and dropout: the ops of ops/activation.h, ops/dropout.h and
// ops/pointwise.h, with nn's options; an inplace option calls the op's in-place form.
#include "cohort/nn/functional/activation.h"

#include "cohort/ops/activation.h"
#include "cohort/ops/dropout.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"

namespace cohort::nn::functional {

namespace {

// The result of an op that has an in-place form: written into x (the caller's tensor, whose
// handle shares x's storage) or computed out of place.
template <class OutOfPlace, class InPlace>
Tensor apply(const Tensor& x, bool inplace, OutOfPlace out_of_place, InPlace in_place) {
  if (!inplace) return out_of_place(x);
  Tensor self = x;
  in_place(self);
  return x;
}

}  // namespace

Tensor relu(const Tensor& x, const ReLUFuncOptions& o) {
  return apply(x, o.inplace(), [](const Tensor& t) { return cohort::relu(t); }, [](Tensor& t) { cohort::relu_(t); });
}

Tensor relu6(const Tensor& x, const ReLU6FuncOptions& o) {
  return apply(x, o.inplace(), [](const Tensor& t) { return cohort::relu6(t); }, [](Tensor& t) { cohort::relu6_(t); });
}

Tensor leaky_relu(const Tensor& x, const LeakyReLUFuncOptions& o) {
  return leaky_relu(x, o.negative_slope(), o.inplace());
}

Tensor leaky_relu(const Tensor& x, double negative_slope, bool inplace) {
  return apply(
      x, inplace, [&](const Tensor& t) { return cohort::leaky_relu(t, negative_slope); },
      [&](Tensor& t) { cohort::leaky_relu_(t, negative_slope); });
}

Tensor gelu(const Tensor& x, const GELUFuncOptions& o) { return cohort::gelu(x, o.approximate()); }
Tensor gelu(const Tensor& x, const std::string& approximate) { return cohort::gelu(x, approximate); }

Tensor elu(const Tensor& x, const ELUFuncOptions& o) {
  return apply(
      x, o.inplace(), [&](const Tensor& t) { return cohort::elu(t, o.alpha()); },
      [&](Tensor& t) { cohort::elu_(t, o.alpha()); });
}

Tensor selu(const Tensor& x, const SELUFuncOptions& o) {
  return apply(x, o.inplace(), [](const Tensor& t) { return cohort::selu(t); }, [](Tensor& t) { cohort::selu_(t); });
}

Tensor celu(const Tensor& x, const CELUFuncOptions& o) {
  return apply(
      x, o.inplace(), [&](const Tensor& t) { return cohort::celu(t, o.alpha()); },
      [&](Tensor& t) { cohort::celu_(t, o.alpha()); });
}

Tensor hardtanh(const Tensor& x, const HardtanhFuncOptions& o) {
  return apply(
      x, o.inplace(), [&](const Tensor& t) { return cohort::hardtanh(t, o.min_val(), o.max_val()); },
      [&](Tensor& t) { cohort::hardtanh_(t, o.min_val(), o.max_val()); });
}

Tensor softplus(const Tensor& x, const SoftplusFuncOptions& o) { return cohort::softplus(x, o.beta(), o.threshold()); }
Tensor softshrink(const Tensor& x, const SoftshrinkFuncOptions& o) { return cohort::softshrink(x, o.lambda()); }
Tensor hardshrink(const Tensor& x, const HardshrinkFuncOptions& o) { return cohort::hardshrink(x, o.lambda()); }

Tensor threshold(const Tensor& x, const ThresholdFuncOptions& o) {
  return apply(
      x, o.inplace(), [&](const Tensor& t) { return cohort::threshold(t, o.threshold(), o.value()); },
      [&](Tensor& t) { cohort::threshold_(t, o.threshold(), o.value()); });
}

Tensor rrelu(const Tensor& x, const RReLUFuncOptions& o) {
  return apply(
      x, o.inplace(), [&](const Tensor& t) { return cohort::rrelu(t, o.lower(), o.upper(), o.training()); },
      [&](Tensor& t) { cohort::rrelu_(t, o.lower(), o.upper(), o.training()); });
}

Tensor glu(const Tensor& x, const GLUFuncOptions& o) { return cohort::glu(x, o.dim()); }

Tensor prelu(const Tensor& x, const Tensor& weight) { return cohort::prelu(x, weight); }
Tensor silu(const Tensor& x) { return cohort::silu(x); }
Tensor mish(const Tensor& x) { return cohort::mish(x); }
Tensor logsigmoid(const Tensor& x) { return cohort::log_sigmoid(x); }
Tensor softsign(const Tensor& x) { return cohort::softsign(x); }
Tensor tanhshrink(const Tensor& x) { return cohort::tanhshrink(x); }
Tensor sigmoid(const Tensor& x) { return cohort::sigmoid(x); }
Tensor tanh(const Tensor& x) { return cohort::tanh(x); }
Tensor softmax(const Tensor& x, int64_t dim) { return cohort::softmax(x, dim); }
Tensor softmax(const Tensor& x, const SoftmaxFuncOptions& o) { return cohort::softmax(x, o.dim(), o.dtype()); }
Tensor log_softmax(const Tensor& x, int64_t dim) { return cohort::log_softmax(x, dim); }
Tensor log_softmax(const Tensor& x, const LogSoftmaxFuncOptions& o) {
  return cohort::log_softmax(x, o.dim(), o.dtype());
}
Tensor softmin(const Tensor& x, const SoftminFuncOptions& o) { return cohort::softmax(neg(x), o.dim(), o.dtype()); }

Tensor dropout(const Tensor& x, double p, bool training, Generator* generator) {
  return cohort::dropout(x, p, training, generator);
}

}  // namespace cohort::nn::functional
