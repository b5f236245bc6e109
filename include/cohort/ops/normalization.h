// Batch normalisation, as libtorch's free function (note its argument order: the affine weight and
// bias before the running statistics):
//   batch_norm(x, weight, bias, running_mean, running_var, /*training=*/true, /*momentum=*/0.1, /*eps=*/1e-5)
// input [N, C], [N, C, L] or [N, C, H, W] (any [N, C, ...]); weight, bias, running_mean, running_var
// [C] or undefined. y = (x - mean) / sqrt(var + eps) * weight + bias per channel, where
// - training: mean and the biased variance of the batch (over N and the trailing dims); defined
//   running stats are updated in place: running = (1 - momentum) running + momentum batch, with the
//   unbiased batch variance (PyTorch's rule);
// - evaluation: the running stats (which must then be defined).
// Differentiable w.r.t. input, weight and bias (node "NativeBatchNormBackward0"; no double backward).
// Throws cohort::Error naming the op for: an input of fewer than 2 dims, stats or affine tensors of
// the wrong size, running_mean and running_var not both defined, undefined running stats in
// evaluation, training with one value per channel; TypeError for non-floating or mixed dtypes.
#pragma once

#include <tuple>
#include <utility>

#include "cohort/core/tensor.h"

namespace cohort {

Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum, double eps);
// ATen's full signature; cudnn_enabled has no meaning on CPU devices and is ignored.
inline Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                         const Tensor& running_var, bool training, double momentum, double eps, bool /*cudnn_enabled*/) {
  return batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps);
}

// Layer and group normalisation, as libtorch's free functions:
//   layer_norm(x, {C})                       // normalise over the last dims, of shape normalized_shape
//   layer_norm(x, {H, W}, w, b, 1e-6)
//   group_norm(x, 2, w, b)                   // x [N, C, ...], C % 2 == 0
// layer_norm: mean and biased variance over the trailing dims `normalized_shape`; weight and bias
// (optional) have that shape. group_norm: over each group of C / num_groups channels and all
// trailing dims of one sample; weight and bias (optional) are [C]. y = (x - mean) / sqrt(var + eps)
// * w + b. layer_norm runs fused row kernels (src/ops/cpu/layer_norm.cpp) whose backward is built from
// differentiable ops under create_graph; group_norm composes mean and var: any order of derivative
// either way. The cudnn flags of ATen's signatures are accepted and ignored.
// Throws cohort::Error naming the op when the trailing dims differ from normalized_shape, C is not
// divisible by num_groups, or weight/bias have the wrong shape.
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5, bool cudnn_enable = true);
Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5, bool cudnn_enabled = true);

// batch_norm, and the statistics it normalised with: the mean and the biased variance per channel,
// float64 [C] without autograd (in training the batch's, as running statistics are updated with; in
// evaluation the running ones). What DataParallel merges into exact running statistics at no extra
// pass over the input. (ATen's native_batch_norm returns the inverse standard deviation instead.)
std::tuple<Tensor, Tensor, Tensor> batch_norm_with_stats(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                         const Tensor& running_mean, const Tensor& running_var,
                                                         bool training, double momentum, double eps);

// The statistics a training batch_norm normalises with: per channel of input [N, C, ...], the mean
// and the biased variance over every other dim, float64 [C] each, without autograd, computed
// without normalising. PyTorch's torch.batch_norm_stats returns the inverse standard deviation instead.
std::pair<Tensor, Tensor> batch_norm_stats(const Tensor& input);

}  // namespace cohort
