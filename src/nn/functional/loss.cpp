// Losses as compositions of tensor ops, whose backward comes from autograd, except nll_loss (and
// so cross_entropy), which runs fused loops (Note [Fused nll_loss]).
#include "cohort/nn/functional/loss.h"

#include "cohort/autograd/grad_mode.h"
#include "cohort/autograd/record.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/indexing.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"
#include "ops/cpu/loss_kernels.h"
#include "ops/internal.h"

namespace cohort::nn::functional {

namespace {

Tensor reduce(const Tensor& loss, Reduction reduction) {
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

// Moves the class dim (1) last and flattens: [N, C, d...] -> [N * d..., C], target -> [N * d...].
std::pair<Tensor, Tensor> flatten_classes(const char* op, const Tensor& input, const Tensor& target) {
  COHORT_CHECK(input.dim() >= 1, op, ": expected an input with a class dim, got shape ", input.sizes());
  if (input.dim() == 1) return {input.unsqueeze(0), target.reshape({1})};
  Shape expected_target = input.sizes().vec();
  expected_target.erase(expected_target.begin() + 1);
  COHORT_CHECK(target.sizes() == IntArrayRef(expected_target), op, ": expected a target of shape ",
               IntArrayRef(expected_target), " for input of shape ", input.sizes(), ", got ", target.sizes());
  if (input.dim() == 2) return {input, target};
  Shape order{0};
  for (int64_t d = 2; d < input.dim(); ++d) order.push_back(d);
  order.push_back(1);
  return {input.permute(order).reshape({-1, input.size(1)}), target.reshape({-1})};
}

// Note [Fused nll_loss]
// The loss of every classifier step: one pass over the samples (kernel::nll_loss_forward, which
// also checks the targets' range) and a node whose backward scatters -weight[t] * grad into zeros.
// Composed of tensor ops it took about twenty of them, with two synchronising .item() calls for
// the range check. Under create_graph the backward is coefficients times the incoming gradient, so
// it stays differentiable in that gradient (nll_loss is linear in its input: no second derivative).
Tensor fused_nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, const NLLLossOptions& options,
                      IntArrayRef none_shape) {
  const Reduction reduction = options.reduction();
  const int64_t ignore = options.ignore_index(), N = input.size(0), C = input.size(1);
  Tensor per_sample = reduction == Reduction::None ? detail::make_empty(none_shape, input.dtype(), input.device())
                                                   : Tensor();
  const kernel::NllTotals totals = kernel::nll_loss_forward("nll_loss", per_sample, input, target, weight, ignore);
  Tensor out = per_sample;
  double factor = 1;  // d out / d per-sample loss
  if (reduction != Reduction::None) {
    factor = reduction == Reduction::Mean ? 1 / totals.weight : 1;  // 0 / 0 is NaN, as in PyTorch
    out = full({}, totals.loss * factor, TensorOptions(input.dtype()).device(input.device()));
  }
  return autograd::record("NllLossBackward0", out, {input},
                          [=, st = autograd::SavedTensor(target), sw = autograd::SavedTensor(weight)](const Tensor& g) {
    const Tensor t = st.unpack(), w = sw.unpack();
    Tensor gx = detail::make_empty({N, C}, g.dtype(), g.device());
    const Tensor scale = reduction == Reduction::None ? g.reshape({N}) : g;
    if (!GradMode::is_enabled()) {
      kernel::nll_loss_backward(gx, scale, factor, t, w, ignore);
      return std::vector<Tensor>{gx};
    }
    kernel::nll_loss_backward(gx, Tensor(), factor, t, w, ignore);  // create_graph: coefficients
    return std::vector<Tensor>{gx * (reduction == Reduction::None ? scale.unsqueeze(1) : scale)};
  });
}

}  // namespace

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_same_shape("mse_loss", input, target);
  return reduce(square(input - target), reduction);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  check_same_shape("l1_loss", input, target);
  return reduce(abs(input - target), reduction);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta) {
  check_same_shape("smooth_l1_loss", input, target);
  COHORT_CHECK(beta >= 0, "smooth_l1_loss: beta must be non-negative, got ", beta);
  Tensor d = abs(input - target);
  if (beta == 0) return reduce(d, reduction);
  return reduce(where(d < beta, square(d) * (0.5 / beta), d - 0.5 * beta), reduction);
}

Tensor nll_loss(const Tensor& input_in, const Tensor& target_in, const NLLLossOptions& options) {
  COHORT_CHECK(input_in.defined() && target_in.defined(), "nll_loss: input and target must be defined");
  COHORT_CHECK_AS(TypeError, target_in.dtype() == kInt64 || target_in.dtype() == kInt32,
                  "nll_loss: expected int64 class indices as target, got ", target_in.dtype(),
                  "; hint: for class probabilities use cross_entropy");
  COHORT_CHECK_AS(TypeError, input_in.is_floating_point(), "nll_loss: expected floating-point log-probabilities as "
                  "input, got ", input_in.dtype());
  auto [input, target] = flatten_classes("nll_loss", input_in, target_in.to(kInt64));
  const Tensor& weight = options.weight();
  if (weight.defined()) {
    COHORT_CHECK(weight.dim() == 1 && weight.size(0) == input.size(1), "nll_loss: weight must have one entry per "
                 "class (", input.size(1), "), got shape ", weight.sizes());
    COHORT_CHECK(!(weight.requires_grad() && GradMode::is_enabled()), "nll_loss: the class weights require grad, "
                 "but the loss is not differentiable in them (nor is PyTorch's); hint: pass weight.detach()");
    detail::check_same_device("nll_loss", input, weight);
  }
  detail::check_same_device("nll_loss", input, target);
  return fused_nll_loss(input, target, weight.defined() ? weight.to(input.dtype()) : Tensor(), options,
                        target_in.sizes());
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyOptions& options) {
  COHORT_CHECK(input.defined() && target.defined(), "cross_entropy: input and target must be defined");
  COHORT_CHECK(input.dim() >= 1, "cross_entropy: expected logits with a class dim, got shape ", input.sizes());
  const double eps = options.label_smoothing();
  COHORT_CHECK(eps >= 0 && eps <= 1, "cross_entropy: label_smoothing must be in [0, 1], got ", eps);
  const int64_t class_dim = input.dim() == 1 ? 0 : 1;
  const int64_t classes = input.size(class_dim);
  Tensor logp = log_softmax(input, class_dim);
  Tensor w = options.weight();
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
    if (options.reduction() == kMean)
      return input.dim() == 1 ? per_sample : per_sample.sum() / static_cast<double>(input.size(0));
    return reduce(per_sample, options.reduction());
  }

  Tensor nll = nll_loss(logp, target, options);
  if (eps == 0) return nll;
  // Label smoothing: mix in the mean negative log-probability over classes (weighted).
  Tensor ignored = target.to(kInt64) == options.ignore_index();
  Tensor smooth = w.defined() ? -(logp * w.to(input.dtype()).view(w_shape)).sum(IntArrayRef{class_dim})
                              : -logp.sum(IntArrayRef{class_dim});
  smooth = where(ignored, zeros_like(smooth), smooth);
  Tensor smooth_reduced;
  switch (options.reduction()) {
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

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction reduction) {
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
  return reduce(loss, reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight,
                                        const Tensor& pos_weight, Reduction reduction) {
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
  return reduce(loss, reduction);
}

}  // namespace cohort::nn::functional
