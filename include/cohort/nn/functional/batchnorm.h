// Batch normalisation (nn::functional, spelled as libtorch's torch::nn::functional::batch_norm):
//   F::batch_norm(x, running_mean, running_var, F::BatchNormFuncOptions().weight(w).bias(b).training(true))
// input [N, C], [N, C, L] or [N, C, H, W] (any [N, C, ...]); weight, bias, running_mean, running_var
// [C] or undefined. y = (x - mean) / sqrt(var + eps) * weight + bias per channel, where
// - training: mean and the biased variance of the batch (over N and the trailing dims); defined
//   running stats are updated in place: running = (1 - momentum) running + momentum batch, with the
//   unbiased batch variance (PyTorch's rule);
// - evaluation: the running stats (which must then be defined).
// Differentiable w.r.t. input, weight and bias (node "NativeBatchNormBackward0"; no double backward).
// Throws cohort::Error naming the op for: an input of fewer than 2 dims, stats or affine tensors of
// the wrong size, undefined running stats in evaluation, training with one value per channel,
// momentum nullopt with running stats (the cumulative average needs the module's
// num_batches_tracked); TypeError for non-floating or mixed dtypes.
#pragma once

#include <optional>
#include <utility>

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

// The statistics a training batch_norm normalises with: per channel of input [N, C, ...], the mean
// and the biased variance over every other dim, float64 [C] each, without autograd. (PyTorch's
// torch.batch_norm_stats returns the inverse standard deviation instead.)
std::pair<Tensor, Tensor> batch_norm_stats(const Tensor& input);

}  // namespace cohort::nn::functional
