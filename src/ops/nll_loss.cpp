// nll_loss: argument checks, the class dim moved last, and one fused pass each way
// (Note [Fused nll_loss]). Kernels: ops/cpu/loss_kernels.h.
#include "cohort/ops/loss.h"

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/profiling.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/shape.h"
#include "ops/cpu/loss_kernels.h"
#include "ops/internal.h"
#include "ops/autocast_casts.h"

namespace cohort {

namespace {

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
Tensor fused_nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, Reduction reduction,
                      int64_t ignore, IntArrayRef none_shape) {
  const int64_t N = input.size(0), C = input.size(1);
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

Tensor nll_loss(const Tensor& input_in, const Tensor& target_in, const Tensor& weight, Reduction reduction,
                int64_t ignore_index) {
  profiling::Scope profile("nll_loss");
  if (profile) profile.inputs({input_in, target_in, weight});
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return nll_loss(autocast::to_float32(input_in), target_in, autocast::to_float32(weight), reduction, ignore_index);
  }
  COHORT_CHECK(input_in.defined() && target_in.defined(), "nll_loss: input and target must be defined");
  COHORT_CHECK_AS(TypeError, target_in.dtype() == kInt64 || target_in.dtype() == kInt32,
                  "nll_loss: expected int64 class indices as target, got ", target_in.dtype(),
                  "; hint: for class probabilities use cross_entropy");
  COHORT_CHECK_AS(TypeError, input_in.is_floating_point(), "nll_loss: expected floating-point log-probabilities as "
                  "input, got ", input_in.dtype());
  auto [input, target] = flatten_classes("nll_loss", input_in, target_in.to(kInt64));
  if (weight.defined()) {
    COHORT_CHECK(weight.dim() == 1 && weight.size(0) == input.size(1), "nll_loss: weight must have one entry per "
                 "class (", input.size(1), "), got shape ", weight.sizes());
    COHORT_CHECK(!(weight.requires_grad() && GradMode::is_enabled()), "nll_loss: the class weights require grad, "
                 "but the loss is not differentiable in them (nor is PyTorch's); hint: pass weight.detach()");
    detail::check_same_device("nll_loss", input, weight);
  }
  detail::check_same_device("nll_loss", input, target);
  return fused_nll_loss(input, target, weight.defined() ? weight.to(input.dtype()) : Tensor(), reduction,
                        ignore_index, target_in.sizes());
}

}  // namespace cohort
