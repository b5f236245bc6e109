// Layer and group normalisation (nn::functional, spelled as libtorch's):
//   F::layer_norm(x, F::LayerNormFuncOptions({C}).weight(w).bias(b))   // normalise the last dims
//   F::group_norm(x, F::GroupNormFuncOptions(2).weight(w).bias(b))     // x [N, C, ...], C % 2 == 0
// The ops cohort::layer_norm and cohort::group_norm (ops/normalization.h: semantics and errors) with
// nn's option structs.
#pragma once

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

}  // namespace cohort::nn::functional
