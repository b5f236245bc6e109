// BatchNorm1d and BatchNorm2d (libtorch's torch::nn::BatchNorm1d / BatchNorm2d):
//   nn::BatchNorm2d bn(nn::BatchNorm2dOptions(6).momentum(0.01));
//   Tensor y = bn(x);   // x [N, 6, H, W]; BatchNorm1d takes [N, C] or [N, C, L]
// Parameters weight (ones) and bias (zeros) [C] unless affine(false); buffers running_mean (zeros),
// running_var (ones) [C] and num_batches_tracked (int64, 0-d) unless track_running_stats(false),
// named as PyTorch's so state dicts match. In training mode forward normalises with batch statistics
// and updates the running ones (momentum nullopt: a cumulative average over num_batches_tracked); in
// eval mode it uses the running statistics (batch ones without track_running_stats).
// Prints like PyTorch: BatchNorm2d(6, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True).
// forward is nn::functional::batch_norm (cohort/nn/functional/batchnorm.h), with its errors, after
// checking the input rank.
#pragma once

#include <functional>
#include <optional>
#include <tuple>

#include "cohort/nn/functional/batchnorm.h"
#include "cohort/nn/module_holder.h"

namespace cohort::nn {

struct BatchNormOptions {
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}  // NOLINT
  BatchNormOptions& eps(double e) { eps_ = e; return *this; }
  BatchNormOptions& momentum(std::optional<double> m) { momentum_ = m; return *this; }
  BatchNormOptions& affine(bool a) { affine_ = a; return *this; }
  BatchNormOptions& track_running_stats(bool t) { track_running_stats_ = t; return *this; }
  int64_t num_features() const { return num_features_; }
  double eps() const { return eps_; }
  const std::optional<double>& momentum() const { return momentum_; }
  bool affine() const { return affine_; }
  bool track_running_stats() const { return track_running_stats_; }

 private:
  int64_t num_features_;
  double eps_ = 1e-5;
  std::optional<double> momentum_ = 0.1;
  bool affine_ = true;
  bool track_running_stats_ = true;
};

// Not in libtorch: how much the statistics of the `batches`-th tracked training batch weigh in the
// running ones, running = (1 - w) running + w batch: the momentum, or 1 / batches (a cumulative
// average) when the momentum is nullopt.
inline double running_stats_weight(const BatchNormOptions& options, int64_t batches) {
  return options.momentum() ? *options.momentum() : 1.0 / static_cast<double>(batches);
}

using BatchNorm1dOptions = BatchNormOptions;
using BatchNorm2dOptions = BatchNormOptions;

// What BatchNorm1d and BatchNorm2d share; Derived names the class, D is 1 or 2.
template <size_t D, class Derived>
class BatchNormImplBase : public Cloneable<Derived> {
 public:
  explicit BatchNormImplBase(const BatchNormOptions& options_) : options(options_) { reset(); }
  void reset() override;
  void reset_running_stats();
  void reset_parameters();
  Tensor forward(const Tensor& input);
  // Not in libtorch: forward (without training_forward) and the per-channel mean and biased
  // variance it normalised with, float64 (cohort::batch_norm_with_stats).
  std::tuple<Tensor, Tensor, Tensor> forward_with_stats(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

  BatchNormOptions options;
  Tensor weight, bias;                                    // [C], undefined without affine
  Tensor running_mean, running_var, num_batches_tracked;  // undefined without track_running_stats
  // Not in libtorch: when set, a training forward returns training_forward(input) (after the rank
  // check) in place of normalising with the input's own statistics and updating the running ones.
  // DataParallel sets it on its replicas: to record the statistics of each replica's input for exact
  // running statistics (Note [Replica buffers]), or for sync batch norm (Note [Sync batch norm]).
  std::function<Tensor(const Tensor& input)> training_forward;

 private:
  void check_input(const Tensor& input) const;
};

class BatchNorm1dImpl : public BatchNormImplBase<1, BatchNorm1dImpl> {
 public:
  using BatchNormImplBase::BatchNormImplBase;
  explicit BatchNorm1dImpl(int64_t num_features) : BatchNormImplBase(BatchNormOptions(num_features)) {}
};

class BatchNorm2dImpl : public BatchNormImplBase<2, BatchNorm2dImpl> {
 public:
  using BatchNormImplBase::BatchNormImplBase;
  explicit BatchNorm2dImpl(int64_t num_features) : BatchNormImplBase(BatchNormOptions(num_features)) {}
};

using BatchNorm1d = ModuleHolder<BatchNorm1dImpl>;
using BatchNorm2d = ModuleHolder<BatchNorm2dImpl>;

extern template class BatchNormImplBase<1, BatchNorm1dImpl>;
extern template class BatchNormImplBase<2, BatchNorm2dImpl>;

}  // namespace cohort::nn
