// Loss functions (nn::functional): the ops of cohort/ops/loss.h (their semantics and errors are
// documented there), with nn's option structs. Reductions as libtorch spells them: kMean (default),
// kSum, kNone.
#pragma once

#include <optional>

#include "cohort/core/tensor.h"
#include "cohort/ops/loss.h"

namespace cohort::nn::functional {

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean);
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean);
// 0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta.
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean, double beta = 1.0);

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
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                            Reduction reduction = kMean);
// input: logits; computed stably. pos_weight broadcasts over the last dim (classes).
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                                        const Tensor& pos_weight = {}, Reduction reduction = kMean);

}  // namespace cohort::nn::functional
