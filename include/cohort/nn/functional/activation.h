// Activation functions and dropout (nn::functional, spelled as libtorch's torch::nn::functional).
// All are compositions of differentiable ops except where noted.
#pragma once

#include <optional>

#include "cohort/core/generator.h"
#include "cohort/core/tensor.h"

namespace cohort::nn::functional {

Tensor relu(const Tensor& x, bool inplace = false);
Tensor leaky_relu(const Tensor& x, double negative_slope = 0.01, bool inplace = false);
// approximate: "none" (exact, with erf) or "tanh".
Tensor gelu(const Tensor& x, const std::string& approximate = "none");
Tensor silu(const Tensor& x);
Tensor sigmoid(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);
// Zeroes each element with probability p and scales the rest by 1 / (1 - p) when training;
// the identity otherwise. Masks come from `generator` (the default one when null).
Tensor dropout(const Tensor& x, double p = 0.5, bool training = true, Generator* generator = nullptr);

}  // namespace cohort::nn::functional
