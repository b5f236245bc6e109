// The losses composed of tensor ops (autograd differentiates them to any order); nll_loss, and so
// cross_entropy_loss's core, is the fused op of src/ops/nll_loss.cpp (Note [Fused nll_loss]).
#include "cohort/ops/loss.h"

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/indexing.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"
#include "ops/autocast_casts.h"

namespace cohort {

namespace {

Tensor reduce_loss(const Tensor& loss, Reduction reduction) {
  switch (reduction) {
    case Reduction::None: return loss;
    case Reduction::Sum: return loss.sum();
    case Reduction::Mean: return loss.mean();
  }
  return loss;
}

void check_same_shape(const char* op, const Tensor& input, const Tensor& target) {
  COHORT_CHECK(input.defined() && target.defined(), op, ": input and target must be defined");
  COHORT_CHECK(input.sizes() == target.sizes(), op, ": input of shape ", input.sizes(), " and target of shape ",
               target.sizes(), " differ; PyTorch would broadcast them silently; hint: reshape one "
               "(e.g. target.view_as(input)) so that they match");
  COHORT_CHECK_AS(TypeError, input.is_floating_point(), op, ": expected a floating-point input, got ", input.dtype());
}

}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return mse_loss(autocast::to_float32(input), autocast::to_float32(target), reduction);
  }
  check_same_shape("mse_loss", input, target);
  return reduce_loss(square(input - target), reduction);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return l1_loss(autocast::to_float32(input), autocast::to_float32(target), reduction);
  }
  check_same_shape("l1_loss", input, target);
  return reduce_loss(abs(input - target), reduction);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return smooth_l1_loss(autocast::to_float32(input), autocast::to_float32(target), reduction, beta);
  }
  check_same_shape("smooth_l1_loss", input, target);
  COHORT_CHECK(beta >= 0, "smooth_l1_loss: beta must be non-negative, got ", beta);
  Tensor d = abs(input - target);
  if (beta == 0) return reduce_loss(d, reduction);
  return reduce_loss(where(d < beta, square(d) * (0.5 / beta), d - 0.5 * beta), reduction);
}

Tensor cross_entropy_loss(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction reduction,
                          int64_t ignore_index, double label_smoothing) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return cross_entropy_loss(autocast::to_float32(input), target, autocast::to_float32(weight), reduction, ignore_index, label_smoothing);
  }
  COHORT_CHECK(input.defined() && target.defined(), "cross_entropy: input and target must be defined");
  COHORT_CHECK(input.dim() >= 1, "cross_entropy: expected logits with a class dim, got shape ", input.sizes());
  const double eps = label_smoothing;
  COHORT_CHECK(eps >= 0 && eps <= 1, "cross_entropy: label_smoothing must be in [0, 1], got ", eps);
  const int64_t class_dim = input.dim() == 1 ? 0 : 1;
  const int64_t classes = input.size(class_dim);
  Tensor logp = log_softmax(input, class_dim);
  const Tensor& w = weight;
  Shape w_shape(input.dim(), 1);
  w_shape[class_dim] = classes;

  if (target.is_floating_point()) {
    // Class probabilities.
    COHORT_CHECK(target.sizes() == input.sizes(), "cross_entropy: class-probability target of shape ", target.sizes(),
                 " must match the input's shape ", input.sizes());
    Tensor t = eps > 0 ? target * (1 - eps) + eps / static_cast<double>(classes) : target;
    Tensor terms = logp * t;
    if (w.defined()) terms = terms * w.to(input.dtype()).view(w_shape);
    Tensor per_sample = -terms.sum(IntArrayRef{class_dim});
    if (reduction == kMean)
      return input.dim() == 1 ? per_sample : per_sample.sum() / static_cast<double>(input.size(0));
    return reduce_loss(per_sample, reduction);
  }

  Tensor nll = nll_loss(logp, target, weight, reduction, ignore_index);
  if (eps == 0) return nll;
  // Label smoothing: mix in the mean negative log-probability over classes (weighted).
  Tensor ignored = target.to(kInt64) == ignore_index;
  Tensor smooth = w.defined() ? -(logp * w.to(input.dtype()).view(w_shape)).sum(IntArrayRef{class_dim})
                              : -logp.sum(IntArrayRef{class_dim});
  smooth = where(ignored, zeros_like(smooth), smooth);
  Tensor smooth_reduced;
  switch (reduction) {
    case Reduction::None: smooth_reduced = smooth; break;
    case Reduction::Sum: smooth_reduced = smooth.sum(); break;
    case Reduction::Mean:
      if (w.defined()) {
        Tensor safe = where(ignored, zeros_like(target.to(kInt64)), target.to(kInt64)).reshape({-1});
        Tensor denom = (index_select(w.to(input.dtype()), 0, safe) * logical_not(ignored).reshape({-1}).to(input.dtype())).sum();
        smooth_reduced = smooth.sum() / denom;
      } else {
        smooth_reduced = smooth.sum() / logical_not(ignored).sum().to(input.dtype());
      }
      break;
  }
  return nll * (1 - eps) + smooth_reduced * (eps / static_cast<double>(classes));
}

Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction, double delta) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return huber_loss(autocast::to_float32(input), autocast::to_float32(target), reduction, delta);
  }
  check_same_shape("huber_loss", input, target);
  COHORT_CHECK(delta > 0, "huber_loss: delta must be positive, got ", delta);
  Tensor d = abs(input - target);
  return reduce_loss(where(d < delta, square(d) * 0.5, (d - 0.5 * delta) * delta), reduction);
}

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction reduction) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return binary_cross_entropy(autocast::to_float32(input), autocast::to_float32(target), autocast::to_float32(weight), reduction);
  }
  check_same_shape("binary_cross_entropy", input, target);
  {
    NoGradGuard no_grad;
    if (input.numel() > 0)
      COHORT_CHECK(input.min().item<double>() >= 0 && input.max().item<double>() <= 1,
                   "binary_cross_entropy: all input values must be between 0 and 1; hint: for logits use "
                   "binary_cross_entropy_with_logits");
  }
  Tensor log_p = clamp_min(log(input), -100);
  Tensor log_q = clamp_min(log(1 - input), -100);
  Tensor loss = -(target * log_p + (1 - target) * log_q);
  if (weight.defined()) loss = loss * weight;
  return reduce_loss(loss, reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight,
                                        const Tensor& pos_weight, Reduction reduction) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return binary_cross_entropy_with_logits(autocast::to_float32(input), autocast::to_float32(target), autocast::to_float32(weight), autocast::to_float32(pos_weight), reduction);
  }
  check_same_shape("binary_cross_entropy_with_logits", input, target);
  // log(1 + exp(-|x|)) + max(-x, 0) = -log(sigmoid(x)), without overflow.
  Tensor neg_log_sigmoid = log1p(exp(-abs(input))) + clamp_min(-input, 0);
  Tensor loss;
  if (pos_weight.defined()) {
    Tensor coeff = (pos_weight - 1) * target + 1;
    loss = (1 - target) * input + coeff * neg_log_sigmoid;
  } else {
    loss = (1 - target) * input + neg_log_sigmoid;
  }
  if (weight.defined()) loss = loss * weight;
  return reduce_loss(loss, reduction);
}

}  // namespace cohort
