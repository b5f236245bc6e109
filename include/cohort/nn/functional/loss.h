// Loss functions (nn::functional): the ops of cohort/ops/loss.h (their semantics and errors are
// documented there), with libtorch's option structs (nn/loss_options.h), and the losses composed of
// ops here: kl_div, soft_margin, margin_ranking, hinge_embedding, cosine_embedding, poisson_nll.
// Reductions as libtorch spells them: kMean (default), kSum, kNone (kl_div also kBatchMean).
//   F::mse_loss(x, y, F::MSELossFuncOptions(torch::kSum));
//   F::kl_div(log_probs, probs, F::KLDivFuncOptions(torch::kBatchMean));
#pragma once

#include <optional>

#include "cohort/core/tensor.h"
#include "cohort/nn/loss_options.h"
#include "cohort/ops/loss.h"

namespace cohort::nn::functional {

Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options = {});
Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options = {});
// 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta. libtorch 1.13 takes beta beside the options (an
// options' beta other than 1 wins, as 2.x reads it there).
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& options = {},
                      double beta = 1.0);
// 0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta).
Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& options = {});

struct CrossEntropyOptions {
  CrossEntropyOptions& weight(Tensor w) { weight_ = std::move(w); return *this; }
  CrossEntropyOptions& ignore_index(int64_t i) { ignore_index_ = i; return *this; }
  CrossEntropyOptions& reduction(Reduction r) { reduction_ = r; return *this; }
  CrossEntropyOptions& label_smoothing(double s) { label_smoothing_ = s; return *this; }
  const Tensor& weight() const { return weight_; }
  int64_t ignore_index() const { return ignore_index_; }
  Reduction reduction() const { return reduction_; }
  double label_smoothing() const { return label_smoothing_; }

 private:
  Tensor weight_;
  int64_t ignore_index_ = -100;
  Reduction reduction_ = kMean;
  double label_smoothing_ = 0.0;
};
using NLLLossOptions = CrossEntropyOptions;  // label_smoothing unused

// cohort::nll_loss (ops/loss.h) with the options' weight, ignore_index and reduction.
Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossOptions& options = {});
// input: logits [N, C, ...]; target: int64 class indices [N, ...], or class probabilities of input's shape.
Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyOptions& options = {});

// input: probabilities in [0, 1]; logs are clamped at -100 as in PyTorch.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BinaryCrossEntropyFuncOptions& options = {});
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight,
                            Reduction reduction = kMean);
// input: logits; computed stably. pos_weight broadcasts over the last dim (classes).
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options = {});
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight,
                                        const Tensor& pos_weight = {}, Reduction reduction = kMean);

// input: log-probabilities; target: probabilities (log-probabilities with log_target). Each element
// target (log target - input), 0 where target is 0; kBatchMean divides the sum by input.size(0).
Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& options = {});
// log(1 + exp(-y x)), y in {1, -1}.
Tensor soft_margin_loss(const Tensor& input, const Tensor& target, const SoftMarginLossFuncOptions& options = {});
// max(0, -y (x1 - x2) + margin), y in {1, -1}.
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossFuncOptions& options = {});
// x where y is 1, max(0, margin - x) where y is -1.
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target,
                            const HingeEmbeddingLossFuncOptions& options = {});
// Rows of x1 and x2 [N, D] (or [D]): 1 - cos where y is 1, max(0, cos - margin) where y is -1.
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             const CosineEmbeddingLossFuncOptions& options = {});
// exp(x) - y x (log_input), else x - y log(x + eps); full adds Stirling's y log y - y + 0.5 log(2 pi y)
// where y > 1.
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, const PoissonNLLLossFuncOptions& options = {});

}  // namespace cohort::nn::functional
