// Activation functions and dropout (nn::functional, spelled as libtorch's torch::nn::functional):
//   F::elu(x, F::ELUFuncOptions().alpha(0.5))     F::relu6(x, /*inplace=*/true)
//   F::softplus(x, F::SoftplusFuncOptions().beta(2))   F::prelu(x, weight)
//   F::threshold(x, F::ThresholdFuncOptions(0.1, 20))   F::softmax(x, F::SoftmaxFuncOptions(1).dtype(kFloat64))
// The ops of ops/activation.h, ops/pointwise.h and ops/reduction.h (values, gradients and errors
// there) with the options of nn/activation_options.h. An inplace option writes the result into x and
// returns x.
#pragma once

#include <optional>
#include <string>

#include "cohort/core/generator.h"
#include "cohort/core/tensor.h"
#include "cohort/nn/activation_options.h"

namespace cohort::nn::functional {

Tensor relu(const Tensor& x, const ReLUFuncOptions& options = {});
Tensor relu6(const Tensor& x, const ReLU6FuncOptions& options = {});
Tensor leaky_relu(const Tensor& x, const LeakyReLUFuncOptions& options = {});
Tensor leaky_relu(const Tensor& x, double negative_slope, bool inplace = false);
// approximate: "none" (exact, with erf) or "tanh".
Tensor gelu(const Tensor& x, const GELUFuncOptions& options = {});
Tensor gelu(const Tensor& x, const std::string& approximate);
Tensor elu(const Tensor& x, const ELUFuncOptions& options = {});
Tensor selu(const Tensor& x, const SELUFuncOptions& options = {});
Tensor celu(const Tensor& x, const CELUFuncOptions& options = {});
Tensor hardtanh(const Tensor& x, const HardtanhFuncOptions& options = {});
Tensor softplus(const Tensor& x, const SoftplusFuncOptions& options = {});
Tensor softshrink(const Tensor& x, const SoftshrinkFuncOptions& options = {});
Tensor hardshrink(const Tensor& x, const HardshrinkFuncOptions& options = {});
Tensor threshold(const Tensor& x, const ThresholdFuncOptions& options);
// Slopes drawn from the default generator in training.
Tensor rrelu(const Tensor& x, const RReLUFuncOptions& options = {});
Tensor glu(const Tensor& x, const GLUFuncOptions& options = {});
// weight: one value, or one per channel (dim 1 of x).
Tensor prelu(const Tensor& x, const Tensor& weight);
Tensor silu(const Tensor& x);
Tensor mish(const Tensor& x);
Tensor logsigmoid(const Tensor& x);
Tensor softsign(const Tensor& x);
Tensor tanhshrink(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor softmax(const Tensor& x, int64_t dim);
Tensor softmax(const Tensor& x, const SoftmaxFuncOptions& options);
Tensor log_softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, const LogSoftmaxFuncOptions& options);
// softmax(-x) along dim.
Tensor softmin(const Tensor& x, const SoftminFuncOptions& options);
// Zeroes each element with probability p and scales the rest by 1 / (1 - p) when training;
// the identity otherwise. Masks come from `generator` (the default one when null).
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true, Generator* generator = nullptr);

}  // namespace cohort::nn::functional
