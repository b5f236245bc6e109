// LayerNorm and GroupNorm (libtorch's torch::nn::LayerNorm / GroupNorm):
//   nn::LayerNorm ln(nn::LayerNormOptions({512}));          // x [*, 512]
//   nn::GroupNorm gn(nn::GroupNormOptions(2, 6).eps(1e-6));  // x [N, 6, ...]
// LayerNorm: weight (ones) and bias (zeros) of normalized_shape unless elementwise_affine(false).
// GroupNorm: weight (ones) and bias (zeros) [num_channels] unless affine(false).
// Prints like PyTorch: LayerNorm((5,), eps=1e-05, elementwise_affine=True), GroupNorm(2, 6, eps=1e-05, affine=True).
// forward is nn::functional::layer_norm / group_norm (cohort/nn/functional/normalization.h).
#pragma once

#include <vector>

#include "cohort/nn/functional/normalization.h"
#include "cohort/nn/module_holder.h"

namespace cohort::nn {

struct LayerNormOptions {
  LayerNormOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  LayerNormOptions& eps(double e) { eps_ = e; return *this; }
  LayerNormOptions& elementwise_affine(bool a) { elementwise_affine_ = a; return *this; }
  const std::vector<int64_t>& normalized_shape() const { return normalized_shape_; }
  double eps() const { return eps_; }
  bool elementwise_affine() const { return elementwise_affine_; }

 private:
  std::vector<int64_t> normalized_shape_;
  double eps_ = 1e-5;
  bool elementwise_affine_ = true;
};

class LayerNormImpl : public Cloneable<LayerNormImpl> {
 public:
  explicit LayerNormImpl(const LayerNormOptions& options_) : options(options_) { reset(); }
  void reset() override;
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

  LayerNormOptions options;
  Tensor weight, bias;  // normalized_shape, undefined without elementwise_affine
};

struct GroupNormOptions {
  GroupNormOptions(int64_t num_groups, int64_t num_channels) : num_groups_(num_groups), num_channels_(num_channels) {}
  GroupNormOptions& eps(double e) { eps_ = e; return *this; }
  GroupNormOptions& affine(bool a) { affine_ = a; return *this; }
  int64_t num_groups() const { return num_groups_; }
  int64_t num_channels() const { return num_channels_; }
  double eps() const { return eps_; }
  bool affine() const { return affine_; }

 private:
  int64_t num_groups_, num_channels_;
  double eps_ = 1e-5;
  bool affine_ = true;
};

class GroupNormImpl : public Cloneable<GroupNormImpl> {
 public:
  explicit GroupNormImpl(const GroupNormOptions& options_) : options(options_) { reset(); }
  GroupNormImpl(int64_t num_groups, int64_t num_channels) : GroupNormImpl(GroupNormOptions(num_groups, num_channels)) {}
  void reset() override;
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

  GroupNormOptions options;
  Tensor weight, bias;  // [num_channels], undefined without affine
};

using LayerNorm = ModuleHolder<LayerNormImpl>;
using GroupNorm = ModuleHolder<GroupNormImpl>;

}  // namespace cohort::nn
