// LayerNorm, GroupNorm, InstanceNorm1d/2d/3d, RMSNorm and LocalResponseNorm (libtorch's torch::nn::...):
//   nn::LayerNorm ln(nn::LayerNormOptions({512}));          // x [*, 512]
//   nn::GroupNorm gn(nn::GroupNormOptions(2, 6).eps(1e-6));  // x [N, 6, ...]
//   nn::InstanceNorm2d in(nn::InstanceNorm2dOptions(6).affine(true));  // x [N, 6, H, W] or [6, H, W]
//   nn::RMSNorm rms(nn::RMSNormOptions({512}));              // x [*, 512] (libtorch 2.x)
//   nn::LocalResponseNorm lrn(nn::LocalResponseNormOptions(5));
// LayerNorm: weight (ones) and bias (zeros) of normalized_shape unless elementwise_affine(false).
// GroupNorm: weight (ones) and bias (zeros) [num_channels] unless affine(false).
// InstanceNorm: weight and bias [num_features] only with affine(true); buffers running_mean (zeros),
// running_var (ones) and num_batches_tracked only with track_running_stats(true), which are then
// updated in training and used in evaluation. An input without the batch dim is normalised as a
// batch of one.
// RMSNorm: weight (ones) of normalized_shape unless elementwise_affine(false).
// Prints like PyTorch: LayerNorm((5,), eps=1e-05, elementwise_affine=True), GroupNorm(2, 6, eps=1e-05, affine=True),
// InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False),
// RMSNorm((5,), eps=None, elementwise_affine=True), LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0).
// forward is the nn::functional form (cohort/nn/functional/normalization.h), with its errors.
#pragma once

#include <optional>
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

struct InstanceNormOptions {
  InstanceNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT
  InstanceNormOptions& num_features(int64_t v) { num_features_ = v; return *this; }
  InstanceNormOptions& eps(double v) { eps_ = v; return *this; }
  InstanceNormOptions& momentum(double v) { momentum_ = v; return *this; }
  InstanceNormOptions& affine(bool v) { affine_ = v; return *this; }
  InstanceNormOptions& track_running_stats(bool v) { track_running_stats_ = v; return *this; }
  int64_t num_features() const { return num_features_; }
  double eps() const { return eps_; }
  double momentum() const { return momentum_; }
  bool affine() const { return affine_; }
  bool track_running_stats() const { return track_running_stats_; }

 private:
  int64_t num_features_;
  double eps_ = 1e-5, momentum_ = 0.1;
  bool affine_ = false, track_running_stats_ = false;
};
using InstanceNorm1dOptions = InstanceNormOptions;
using InstanceNorm2dOptions = InstanceNormOptions;
using InstanceNorm3dOptions = InstanceNormOptions;

// What InstanceNorm1d/2d/3d share; D is the number of dims after the channel dim.
template <size_t D, class Derived>
class InstanceNormImplBase : public Cloneable<Derived> {
 public:
  explicit InstanceNormImplBase(const InstanceNormOptions& options_) : options(options_) { reset(); }
  void reset() override;
  void reset_running_stats();
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

  InstanceNormOptions options;
  Tensor weight, bias;                                    // [C], undefined without affine
  Tensor running_mean, running_var, num_batches_tracked;  // undefined without track_running_stats
};

class InstanceNorm1dImpl : public InstanceNormImplBase<1, InstanceNorm1dImpl> {
 public:
  using InstanceNormImplBase::InstanceNormImplBase;
};
class InstanceNorm2dImpl : public InstanceNormImplBase<2, InstanceNorm2dImpl> {
 public:
  using InstanceNormImplBase::InstanceNormImplBase;
};
class InstanceNorm3dImpl : public InstanceNormImplBase<3, InstanceNorm3dImpl> {
 public:
  using InstanceNormImplBase::InstanceNormImplBase;
};
using InstanceNorm1d = ModuleHolder<InstanceNorm1dImpl>;
using InstanceNorm2d = ModuleHolder<InstanceNorm2dImpl>;
using InstanceNorm3d = ModuleHolder<InstanceNorm3dImpl>;
extern template class InstanceNormImplBase<1, InstanceNorm1dImpl>;
extern template class InstanceNormImplBase<2, InstanceNorm2dImpl>;
extern template class InstanceNormImplBase<3, InstanceNorm3dImpl>;

struct RMSNormOptions {
  RMSNormOptions(std::vector<int64_t> normalized_shape) : normalized_shape_(std::move(normalized_shape)) {}  // NOLINT
  RMSNormOptions& normalized_shape(std::vector<int64_t> v) { normalized_shape_ = std::move(v); return *this; }
  RMSNormOptions& eps(std::optional<double> e) { eps_ = e; return *this; }
  RMSNormOptions& elementwise_affine(bool a) { elementwise_affine_ = a; return *this; }
  const std::vector<int64_t>& normalized_shape() const { return normalized_shape_; }
  const std::optional<double>& eps() const { return eps_; }
  bool elementwise_affine() const { return elementwise_affine_; }

 private:
  std::vector<int64_t> normalized_shape_;
  std::optional<double> eps_;  // none: the machine epsilon of the input's dtype
  bool elementwise_affine_ = true;
};

class RMSNormImpl : public Cloneable<RMSNormImpl> {
 public:
  explicit RMSNormImpl(const RMSNormOptions& options_) : options(options_) { reset(); }
  void reset() override;
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

  RMSNormOptions options;
  Tensor weight;  // normalized_shape, undefined without elementwise_affine
};
using RMSNorm = ModuleHolder<RMSNormImpl>;

using LocalResponseNormOptions = functional::LocalResponseNormFuncOptions;

class LocalResponseNormImpl : public Cloneable<LocalResponseNormImpl> {
 public:
  explicit LocalResponseNormImpl(const LocalResponseNormOptions& options_) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& input) { return functional::local_response_norm(input, options); }
  void pretty_print(std::ostream& os) const override;

  LocalResponseNormOptions options;
};
using LocalResponseNorm = ModuleHolder<LocalResponseNormImpl>;

}  // namespace cohort::nn
