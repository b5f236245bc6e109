// The functional losses: the ops of cohort/ops/loss.h with libtorch's option structs.
#include "cohort/nn/functional/loss.h"

#include "cohort/core/error.h"
#include "cohort/ops/loss.h"

namespace cohort::nn::functional {

Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& options) {
  return cohort::mse_loss(input, target, options.reduction());
}
Tensor l1_loss(const Tensor& input, const Tensor& target, const L1LossFuncOptions& options) {
  return cohort::l1_loss(input, target, options.reduction());
}
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, const SmoothL1LossFuncOptions& options,
                      double beta) {
  return cohort::smooth_l1_loss(input, target, options.reduction(), options.beta() != 1.0 ? options.beta() : beta);
}
Tensor huber_loss(const Tensor& input, const Tensor& target, const HuberLossFuncOptions& options) {
  return cohort::huber_loss(input, target, options.reduction(), options.delta());
}
Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossOptions& options) {
  return cohort::nll_loss(input, target, options.weight(), options.reduction(), options.ignore_index());
}
Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyOptions& options) {
  return cohort::cross_entropy_loss(input, target, options.weight(), options.reduction(), options.ignore_index(),
                                    options.label_smoothing());
}
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const BinaryCrossEntropyFuncOptions& options) {
  return cohort::binary_cross_entropy(input, target, options.weight(), options.reduction());
}
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction reduction) {
  return cohort::binary_cross_entropy(input, target, weight, reduction);
}
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const BinaryCrossEntropyWithLogitsFuncOptions& options) {
  return cohort::binary_cross_entropy_with_logits(input, target, options.weight(), options.pos_weight(),
                                                  options.reduction());
}
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight,
                                        const Tensor& pos_weight, Reduction reduction) {
  return cohort::binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction);
}

Tensor kl_div(const Tensor& input, const Tensor& target, const KLDivFuncOptions& options) {
  if (!options.batch_mean()) return cohort::kl_div(input, target, options.reduction(), options.log_target());
  COHORT_CHECK(input.dim() > 0, "kl_div: kBatchMean needs a batch dimension, got a 0-d input");
  return cohort::kl_div(input, target, kSum, options.log_target()) / static_cast<double>(input.size(0));
}

Tensor soft_margin_loss(const Tensor& input, const Tensor& target, const SoftMarginLossFuncOptions& options) {
  return cohort::soft_margin_loss(input, target, options.reduction());
}

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossFuncOptions& options) {
  return cohort::margin_ranking_loss(input1, input2, target, options.margin(), options.reduction());
}

Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, const HingeEmbeddingLossFuncOptions& options) {
  return cohort::hinge_embedding_loss(input, target, options.margin(), options.reduction());
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             const CosineEmbeddingLossFuncOptions& options) {
  return cohort::cosine_embedding_loss(input1, input2, target, options.margin(), options.reduction());
}

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, const PoissonNLLLossFuncOptions& options) {
  return cohort::poisson_nll_loss(input, target, options.log_input(), options.full(), options.eps(),
                                  options.reduction());
}

}  // namespace cohort::nn::functional
