// The losses composed of tensor ops (autograd differentiates them to any order); nll_loss, and so
// cross_entropy_loss's core, is the fused op of src/ops/nll_loss.cpp (Note [Fused nll_loss]).
#include "cohort/ops/loss.h"

#include <cmath>
#include <string>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/profiling.h"
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

// Two operands of an elementwise loss, which PyTorch would broadcast silently: different shapes are
// an error naming both.
void check_same_shape(const char* op, const Tensor& a, const char* a_name, const Tensor& b, const char* b_name) {
  COHORT_CHECK(a.defined() && b.defined(), op, ": ", a_name, " and ", b_name, " must be defined");
  COHORT_CHECK(a.sizes() == b.sizes(), op, ": ", a_name, " of shape ", a.sizes(), " and ", b_name, " of shape ",
               b.sizes(), " differ; PyTorch would broadcast them silently; hint: reshape one (e.g. ", b_name,
               ".view_as(", a_name, ")) so that they match");
  COHORT_CHECK_AS(TypeError, a.is_floating_point(), op, ": expected a floating-point ", a_name, ", got ", a.dtype());
}

void check_same_shape(const char* op, const Tensor& input, const Tensor& target) {
  check_same_shape(op, input, "input", target, "target");
}

}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  profiling::Scope profile("mse_loss");
  if (profile) profile.inputs({input, target});
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
  profiling::Scope profile("cross_entropy_loss");
  if (profile) profile.inputs({input, target, weight});
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

Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction, bool log_target) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return kl_div(autocast::to_float32(input), autocast::to_float32(target), reduction, log_target);
  }
  check_same_shape("kl_div", input, target);
  if (log_target) return reduce_loss(target.exp() * (target - input), reduction);
  // target log(target), 0 where target is 0 (xlogy); the log reads 1 there, so no NaN reaches a gradient.
  const Tensor positive = target > 0;
  const Tensor entropy = where(positive, target * where(positive, target, ones_like(target)).log(), zeros_like(target));
  return reduce_loss(entropy - target * input, reduction);
}

Tensor soft_margin_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return soft_margin_loss(autocast::to_float32(input), autocast::to_float32(target), reduction);
  }
  check_same_shape("soft_margin_loss", input, target);
  return reduce_loss(log1p(exp(-target * input)), reduction);
}

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                           Reduction reduction) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return margin_ranking_loss(autocast::to_float32(input1), autocast::to_float32(input2), autocast::to_float32(target), margin, reduction);
  }
  check_same_shape("margin_ranking_loss", input1, "input1", input2, "input2");
  check_same_shape("margin_ranking_loss", input1, "input1", target, "target");
  return reduce_loss(clamp_min(-target * (input1 - input2) + margin, 0), reduction);
}

Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin, Reduction reduction) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return hinge_embedding_loss(autocast::to_float32(input), autocast::to_float32(target), margin, reduction);
  }
  check_same_shape("hinge_embedding_loss", input, target);
  // PyTorch's form: the margin term where the target is not 1, the input where it is not -1.
  const Tensor zero = zeros_like(input);
  const Tensor margin_term = where(target != 1, clamp_min(margin - input, 0), zero);
  return reduce_loss(margin_term + where(target != -1, input, zero), reduction);
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin,
                             Reduction reduction) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return cosine_embedding_loss(autocast::to_float32(input1), autocast::to_float32(input2), autocast::to_float32(target), margin, reduction);
  }
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
  return reduce_loss(where(target == 1, 1 - cos, zero) + where(target == -1, clamp_min(cos - margin, 0), zero),
                     reduction);
}

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full, double eps,
                        Reduction reduction) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return poisson_nll_loss(autocast::to_float32(input), autocast::to_float32(target), log_input, full, eps, reduction);
  }
  check_same_shape("poisson_nll_loss", input, target);
  Tensor loss = log_input ? exp(input) - target * input : input - target * log(input + eps);
  if (full) {
    // Stirling's approximation of log(target!), counted where target > 1.
    const Tensor big = target > 1;
    const Tensor t = where(big, target, ones_like(target));
    const Tensor stirling = t * log(t) - t + 0.5 * log(2 * M_PI * t);
    loss = loss + where(big, stirling, zeros_like(target));
  }
  return reduce_loss(loss, reduction);
}

}  // namespace cohort
