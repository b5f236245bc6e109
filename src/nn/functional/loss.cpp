// The functional losses: the ops of cohort/ops/loss.h, with nn's option structs.
#include "cohort/nn/functional/loss.h"

namespace cohort::nn::functional {

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  return cohort::mse_loss(input, target, reduction);
}
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  return cohort::l1_loss(input, target, reduction);
}
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta) {
  return cohort::smooth_l1_loss(input, target, reduction, beta);
}
Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossOptions& options) {
  return cohort::nll_loss(input, target, options.weight(), options.reduction(), options.ignore_index());
}
Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyOptions& options) {
  return cohort::cross_entropy_loss(input, target, options.weight(), options.reduction(), options.ignore_index(),
                                    options.label_smoothing());
}
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction reduction) {
  return cohort::binary_cross_entropy(input, target, weight, reduction);
}
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight,
                                        const Tensor& pos_weight, Reduction reduction) {
  return cohort::binary_cross_entropy_with_logits(input, target, weight, pos_weight, reduction);
}

}  // namespace cohort::nn::functional
