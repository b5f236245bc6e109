// Normalisation in nn::functional, spelled as libtorch's:
//   F::layer_norm(x, F::LayerNormFuncOptions({C}).weight(w).bias(b))   // normalise the last dims
//   F::group_norm(x, F::GroupNormFuncOptions(2).weight(w).bias(b))     // x [N, C, ...], C % 2 == 0
//   F::instance_norm(x, F::InstanceNormFuncOptions().weight(w).bias(b)) // each channel of each sample
//   F::rms_norm(x, F::RMSNormFuncOptions({C}).weight(w))               // libtorch 2.x
//   F::normalize(x, F::NormalizeFuncOptions().p(1).dim(-1))            // unit p-norm along dim
//   F::local_response_norm(x, F::LocalResponseNormFuncOptions(3))      // across channels
// layer_norm and group_norm are the ops cohort::layer_norm and cohort::group_norm (ops/normalization.h:
// semantics and errors) with nn's option structs; the others are composed of ops here, so they are
// differentiable to any order.
#pragma once

#include <optional>
#include <vector>

#include "cohort/core/tensor.h"

namespace cohort::nn::functional {

struct LayerNormFuncOptions {
  LayerNormFuncOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  LayerNormFuncOptions& weight(const Tensor& w) { weight_ = w; return *this; }
  LayerNormFuncOptions& bias(const Tensor& b) { bias_ = b; return *this; }
  LayerNormFuncOptions& eps(double e) { eps_ = e; return *this; }
  const std::vector<int64_t>& normalized_shape() const { return normalized_shape_; }
  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }
  double eps() const { return eps_; }

 private:
  std::vector<int64_t> normalized_shape_;
  Tensor weight_, bias_;
  double eps_ = 1e-5;
};

struct GroupNormFuncOptions {
  GroupNormFuncOptions(int64_t num_groups) : num_groups_(num_groups) {}  // NOLINT
  GroupNormFuncOptions& weight(const Tensor& w) { weight_ = w; return *this; }
  GroupNormFuncOptions& bias(const Tensor& b) { bias_ = b; return *this; }
  GroupNormFuncOptions& eps(double e) { eps_ = e; return *this; }
  int64_t num_groups() const { return num_groups_; }
  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }
  double eps() const { return eps_; }

 private:
  int64_t num_groups_;
  Tensor weight_, bias_;
  double eps_ = 1e-5;
};

Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& options);
Tensor group_norm(const Tensor& input, const GroupNormFuncOptions& options);

struct InstanceNormFuncOptions {
  InstanceNormFuncOptions& running_mean(const Tensor& t) { running_mean_ = t; return *this; }
  InstanceNormFuncOptions& running_var(const Tensor& t) { running_var_ = t; return *this; }
  InstanceNormFuncOptions& weight(const Tensor& t) { weight_ = t; return *this; }
  InstanceNormFuncOptions& bias(const Tensor& t) { bias_ = t; return *this; }
  InstanceNormFuncOptions& use_input_stats(bool v) { use_input_stats_ = v; return *this; }
  InstanceNormFuncOptions& momentum(double v) { momentum_ = v; return *this; }
  InstanceNormFuncOptions& eps(double v) { eps_ = v; return *this; }
  const Tensor& running_mean() const { return running_mean_; }
  const Tensor& running_var() const { return running_var_; }
  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }
  bool use_input_stats() const { return use_input_stats_; }
  double momentum() const { return momentum_; }
  double eps() const { return eps_; }

 private:
  Tensor running_mean_, running_var_, weight_, bias_;
  bool use_input_stats_ = true;
  double momentum_ = 0.1, eps_ = 1e-5;
};

// Instance normalisation (PyTorch's instance_norm): input [N, C, ...] with at least one trailing
// dim; each (sample, channel) is normalised over the trailing dims, y = (x - mean) / sqrt(var + eps)
// * weight[c] + bias[c], with the biased variance. With use_input_stats (the default) the
// statistics are the input's, and defined running_mean / running_var [C] are updated in place with
// momentum by the mean over the samples of each one's statistics (the unbiased variance, as
// batch_norm's); without it the running ones are used. weight, bias, running stats: [C] or undefined.
// Throws cohort::Error for fewer than 3 dims, one value per channel with use_input_stats,
// use_input_stats(false) without running stats, and [C] tensors of the wrong size.
Tensor instance_norm(const Tensor& input, const InstanceNormFuncOptions& options = {});

struct RMSNormFuncOptions {
  RMSNormFuncOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  RMSNormFuncOptions& weight(const Tensor& w) { weight_ = w; return *this; }
  RMSNormFuncOptions& eps(std::optional<double> e) { eps_ = e; return *this; }
  const std::vector<int64_t>& normalized_shape() const { return normalized_shape_; }
  const Tensor& weight() const { return weight_; }
  const std::optional<double>& eps() const { return eps_; }

 private:
  std::vector<int64_t> normalized_shape_;
  Tensor weight_;
  std::optional<double> eps_;
};

// Root-mean-square normalisation over the trailing dims `normalized_shape` (libtorch 2.x):
// y = x / sqrt(mean(x^2) + eps) * weight. eps defaults to the machine epsilon of x's dtype (of
// float32 for bfloat16 and float16, which compute in float32 and round once). weight: that shape,
// or undefined. Throws cohort::Error when the input's trailing dims are not normalized_shape or the
// weight's shape differs from it.
Tensor rms_norm(const Tensor& input, const RMSNormFuncOptions& options);

struct NormalizeFuncOptions {
  NormalizeFuncOptions& p(double v) { p_ = v; return *this; }
  NormalizeFuncOptions& dim(int64_t v) { dim_ = v; return *this; }
  NormalizeFuncOptions& eps(double v) { eps_ = v; return *this; }
  NormalizeFuncOptions& out(std::optional<Tensor> t) { out_ = std::move(t); return *this; }
  double p() const { return p_; }
  int64_t dim() const { return dim_; }
  double eps() const { return eps_; }
  const std::optional<Tensor>& out() const { return out_; }

 private:
  double p_ = 2.0;
  int64_t dim_ = 1;
  double eps_ = 1e-12;
  std::optional<Tensor> out_;
};

// x / max(||x||_p, eps) with the norm along dim (p > 0, or inf). With out, the result is written
// into it (which must have x's shape and dtype) and it is returned.
Tensor normalize(const Tensor& input, NormalizeFuncOptions options = {});

struct LocalResponseNormFuncOptions {
  LocalResponseNormFuncOptions(int64_t size) : size_(size) {}  // NOLINT
  LocalResponseNormFuncOptions& size(int64_t v) { size_ = v; return *this; }
  LocalResponseNormFuncOptions& alpha(double v) { alpha_ = v; return *this; }
  LocalResponseNormFuncOptions& beta(double v) { beta_ = v; return *this; }
  LocalResponseNormFuncOptions& k(double v) { k_ = v; return *this; }
  int64_t size() const { return size_; }
  double alpha() const { return alpha_; }
  double beta() const { return beta_; }
  double k() const { return k_; }

 private:
  int64_t size_;
  double alpha_ = 1e-4, beta_ = 0.75, k_ = 1.0;
};

// x / (k + alpha / size * sum of x^2 over `size` neighbouring channels)^beta, the window
// [c - size / 2, c + (size - 1) / 2] cut at the edges (PyTorch's). input [N, C, ...] with at least
// 3 dims; throws cohort::Error otherwise or for size < 1.
Tensor local_response_norm(const Tensor& input, const LocalResponseNormFuncOptions& options);

}  // namespace cohort::nn::functional
