// The functional losses: the ops of cohort/ops/loss.h with libtorch's option structs, and the losses
// that are compositions of ops (their gradients are autograd's of the composition).
#include "cohort/nn/functional/loss.h"

#include <cmath>

#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"

namespace cohort::nn::functional {

namespace {

Tensor reduced(const Tensor& loss, Reduction reduction) {
  switch (reduction) {
    case Reduction::None: return loss;
    case Reduction::Sum: return loss.sum();
    case Reduction::Mean: return loss.mean();
  }
  return loss;
}

void check_same_shape(const char* op, const Tensor& a, const char* a_name, const Tensor& b, const char* b_name) {
  COHORT_CHECK(a.defined() && b.defined(), op, ": ", a_name, " and ", b_name, " must be defined");
  COHORT_CHECK(a.sizes() == b.sizes(), op, ": ", a_name, " and ", b_name, " must have the same shape, got ",
               a.sizes(), " and ", b.sizes());
}

}  // namespace

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
  check_same_shape("kl_div", input, "input", target, "target");
  Tensor loss;
  if (options.log_target()) {
    loss = target.exp() * (target - input);
  } else {
    // target log(target), 0 where target is 0 (xlogy); the log reads 1 there, so no NaN reaches a gradient.
    const Tensor positive = target > 0;
    loss = where(positive, target * where(positive, target, ones_like(target)).log(), zeros_like(target)) -
           target * input;
  }
  if (options.batch_mean()) {
    COHORT_CHECK(input.dim() > 0, "kl_div: kBatchMean needs a batch dimension, got a 0-d input");
    return loss.sum() / static_cast<double>(input.size(0));
  }
  return reduced(loss, options.reduction());
}

Tensor soft_margin_loss(const Tensor& input, const Tensor& target, const SoftMarginLossFuncOptions& options) {
  check_same_shape("soft_margin_loss", input, "input", target, "target");
  return reduced(log1p(exp(-target * input)), options.reduction());
}

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           const MarginRankingLossFuncOptions& options) {
  check_same_shape("margin_ranking_loss", input1, "input1", input2, "input2");
  check_same_shape("margin_ranking_loss", input1, "input1", target, "target");
  return reduced((-target * (input1 - input2) + options.margin()).clamp_min(0), options.reduction());
}

Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, const HingeEmbeddingLossFuncOptions& options) {
  check_same_shape("hinge_embedding_loss", input, "input", target, "target");
  // PyTorch's form: the margin term where the target is not 1, the input where it is not -1.
  const Tensor zero = zeros_like(input);
  const Tensor margin_term = where(target != 1, (options.margin() - input).clamp_min(0), zero);
  return reduced(margin_term + where(target != -1, input, zero), options.reduction());
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             const CosineEmbeddingLossFuncOptions& options) {
  check_same_shape("cosine_embedding_loss", input1, "input1", input2, "input2");
  COHORT_CHECK(input1.dim() == 1 || input1.dim() == 2, "cosine_embedding_loss: expected inputs [N, D] or [D], got ",
               input1.sizes());
  COHORT_CHECK(target.dim() == input1.dim() - 1 && (target.dim() == 0 || target.size(0) == input1.size(0)),
               "cosine_embedding_loss: expected a target of shape ",
               input1.dim() == 2 ? "[" + std::to_string(input1.size(0)) + "]" : std::string("[]"), " for inputs ",
               input1.sizes(), ", got ", target.sizes());
  // PyTorch's guard against a zero row: 1e-12 added to each squared norm.
  constexpr double kEps = 1e-12;
  const int64_t d = input1.dim() - 1;
  const Tensor squares = ((input1 * input1).sum(d) + kEps) * ((input2 * input2).sum(d) + kEps);
  const Tensor cos = (input1 * input2).sum(d) / squares.sqrt();
  const Tensor zero = zeros_like(cos);
  const Tensor loss =
      where(target == 1, 1 - cos, zero) + where(target == -1, (cos - options.margin()).clamp_min(0), zero);
  return reduced(loss, options.reduction());
}

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, const PoissonNLLLossFuncOptions& options) {
  check_same_shape("poisson_nll_loss", input, "input", target, "target");
  Tensor loss = options.log_input() ? input.exp() - target * input : input - target * (input + options.eps()).log();
  if (options.full()) {
    // Stirling's approximation of log(target!), counted where target > 1.
    const Tensor big = target > 1;
    const Tensor t = where(big, target, ones_like(target));
    const Tensor stirling = t * t.log() - t + 0.5 * (2 * M_PI * t).log();
    loss = loss + where(big, stirling, zeros_like(target));
  }
  return reduced(loss, options.reduction());
}

}  // namespace cohort::nn::functional
