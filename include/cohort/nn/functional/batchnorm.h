// Batch normalisation (nn::functional, spelled as libtorch's torch::nn::functional::batch_norm):
//   F::batch_norm(x, running_mean, running_var, F::BatchNormFuncOptions().weight(w).bias(b).training(true))
// cohort::batch_norm (cohort/ops/normalization.h, which gives the maths, gradients and errors) with
// the running statistics first, as F::batch_norm orders them. momentum nullopt is the module's
// cumulative average: it throws here when running statistics would be updated, since only the module
// knows num_batches_tracked.
#pragma once

#include <optional>

#include "cohort/core/tensor.h"

namespace cohort::nn::functional {

struct BatchNormFuncOptions {
  BatchNormFuncOptions& weight(const Tensor& w) { weight_ = w; return *this; }
  BatchNormFuncOptions& bias(const Tensor& b) { bias_ = b; return *this; }
  BatchNormFuncOptions& training(bool t) { training_ = t; return *this; }
  BatchNormFuncOptions& momentum(std::optional<double> m) { momentum_ = m; return *this; }
  BatchNormFuncOptions& eps(double e) { eps_ = e; return *this; }
  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }
  bool training() const { return training_; }
  const std::optional<double>& momentum() const { return momentum_; }
  double eps() const { return eps_; }

 private:
  Tensor weight_, bias_;
  bool training_ = false;
  std::optional<double> momentum_ = 0.1;
  double eps_ = 1e-5;
};

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& options = {});
// PyTorch's positional form: F.batch_norm(input, running_mean, running_var, weight, bias, training,
// momentum, eps).
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, std::optional<double> momentum = 0.1, double eps = 1e-5);

}  // namespace cohort::nn::functional
