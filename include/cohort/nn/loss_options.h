// The losses' options, shared by the modules (nn::MSELoss(nn::MSELossOptions(...))) and
// nn::functional (F::mse_loss(x, y, F::MSELossFuncOptions(...))) as libtorch shares them. Each takes
// libtorch's reduction tags: torch::kMean (default), kSum, kNone; KLDivLossOptions also torch::kBatchMean.
#pragma once

#include <utility>

#include "cohort/core/tensor.h"
#include "cohort/ops/reduction_mode.h"

namespace cohort {

// kl_div's fourth reduction: the sum divided by the batch size (the KL divergence's true mean).
struct BatchMean {};
inline constexpr BatchMean kBatchMean{};

namespace nn {

namespace detail {
// The reduction every loss's options have; each setter returns the options' own type, so that
// F::HuberLossFuncOptions().delta(0.5).reduction(torch::kSum) is still Huber's options.
template <class Self>
struct WithReduction {
  WithReduction(Reduction r = kMean) : reduction_(r) {}  // NOLINT
  Self& reduction(Reduction r) { reduction_ = r; return static_cast<Self&>(*this); }
  Reduction reduction() const { return reduction_; }

 private:
  Reduction reduction_;
};
}  // namespace detail

struct ReductionOptions : detail::WithReduction<ReductionOptions> {
  using WithReduction::WithReduction;
};
using MSELossOptions = ReductionOptions;
using L1LossOptions = ReductionOptions;
using SoftMarginLossOptions = ReductionOptions;

struct SmoothL1LossOptions : detail::WithReduction<SmoothL1LossOptions> {
  using WithReduction::WithReduction;
  SmoothL1LossOptions& beta(double b) { beta_ = b; return *this; }
  double beta() const { return beta_; }

 private:
  double beta_ = 1.0;
};

struct HuberLossOptions : detail::WithReduction<HuberLossOptions> {
  using WithReduction::WithReduction;
  HuberLossOptions& delta(double d) { delta_ = d; return *this; }
  double delta() const { return delta_; }

 private:
  double delta_ = 1.0;
};

struct BCELossOptions : detail::WithReduction<BCELossOptions> {
  using WithReduction::WithReduction;
  BCELossOptions& weight(Tensor w) { weight_ = std::move(w); return *this; }
  const Tensor& weight() const { return weight_; }

 private:
  Tensor weight_;
};

struct BCEWithLogitsLossOptions : detail::WithReduction<BCEWithLogitsLossOptions> {
  using WithReduction::WithReduction;
  BCEWithLogitsLossOptions& weight(Tensor w) { weight_ = std::move(w); return *this; }
  BCEWithLogitsLossOptions& pos_weight(Tensor w) { pos_weight_ = std::move(w); return *this; }
  const Tensor& weight() const { return weight_; }
  const Tensor& pos_weight() const { return pos_weight_; }

 private:
  Tensor weight_, pos_weight_;
};

// reduction kMean (the mean over every element, PyTorch's default), kBatchMean, kSum or kNone;
// log_target: the target holds log-probabilities.
struct KLDivLossOptions {
  KLDivLossOptions(Reduction r = kMean) : reduction_(r) {}  // NOLINT
  KLDivLossOptions(BatchMean) : batch_mean_(true) {}        // NOLINT
  KLDivLossOptions& reduction(Reduction r) { reduction_ = r, batch_mean_ = false; return *this; }
  KLDivLossOptions& reduction(BatchMean) { batch_mean_ = true; return *this; }
  KLDivLossOptions& log_target(bool v) { log_target_ = v; return *this; }
  Reduction reduction() const { return reduction_; }
  bool batch_mean() const { return batch_mean_; }
  bool log_target() const { return log_target_; }

 private:
  Reduction reduction_ = kMean;
  bool batch_mean_ = false, log_target_ = false;
};

// margin: max(0, -y (x1 - x2) + margin).
struct MarginRankingLossOptions : detail::WithReduction<MarginRankingLossOptions> {
  using WithReduction::WithReduction;
  MarginRankingLossOptions& margin(double m) { margin_ = m; return *this; }
  double margin() const { return margin_; }

 private:
  double margin_ = 0.0;
};

struct HingeEmbeddingLossOptions : detail::WithReduction<HingeEmbeddingLossOptions> {
  using WithReduction::WithReduction;
  HingeEmbeddingLossOptions& margin(double m) { margin_ = m; return *this; }
  double margin() const { return margin_; }

 private:
  double margin_ = 1.0;
};

struct CosineEmbeddingLossOptions : detail::WithReduction<CosineEmbeddingLossOptions> {
  using WithReduction::WithReduction;
  CosineEmbeddingLossOptions& margin(double m) { margin_ = m; return *this; }
  double margin() const { return margin_; }

 private:
  double margin_ = 0.0;
};

struct PoissonNLLLossOptions : detail::WithReduction<PoissonNLLLossOptions> {
  using WithReduction::WithReduction;
  PoissonNLLLossOptions& log_input(bool v) { log_input_ = v; return *this; }
  PoissonNLLLossOptions& full(bool v) { full_ = v; return *this; }
  PoissonNLLLossOptions& eps(double v) { eps_ = v; return *this; }
  bool log_input() const { return log_input_; }
  bool full() const { return full_; }
  double eps() const { return eps_; }

 private:
  bool log_input_ = true, full_ = false;
  double eps_ = 1e-8;
};

namespace functional {
using MSELossFuncOptions = MSELossOptions;
using L1LossFuncOptions = L1LossOptions;
using SmoothL1LossFuncOptions = SmoothL1LossOptions;
using HuberLossFuncOptions = HuberLossOptions;
using BinaryCrossEntropyFuncOptions = BCELossOptions;
using BinaryCrossEntropyWithLogitsFuncOptions = BCEWithLogitsLossOptions;
using KLDivFuncOptions = KLDivLossOptions;
using SoftMarginLossFuncOptions = SoftMarginLossOptions;
using MarginRankingLossFuncOptions = MarginRankingLossOptions;
using HingeEmbeddingLossFuncOptions = HingeEmbeddingLossOptions;
using CosineEmbeddingLossFuncOptions = CosineEmbeddingLossOptions;
using PoissonNLLLossFuncOptions = PoissonNLLLossOptions;
}  // namespace functional

}  // namespace nn
}  // namespace cohort
