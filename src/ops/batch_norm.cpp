// batch_norm: argument checks and the autograd node over the fused kernels of
// ops/cpu/batch_norm_kernels.h (which also update the running statistics), with a composed backward
// for create_graph; batch_norm_stats.
#include "cohort/ops/normalization.h"

#include <optional>

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"
#include "ops/cpu/batch_norm_kernels.h"
#include "ops/internal.h"
#include "cohort/autograd/trace.h"

namespace cohort {

using autograd::SavedTensor;

namespace {

// A parameter or running statistic has the input's dtype, or, with a bfloat16 or float16 input,
// float32 (PyTorch 1.13's mixed batch norm on the CPU: a float32 module on narrow activations);
// `params` is the dtype of the ones checked before, which all must share.
void check_per_channel(const Tensor& t, const char* what, const Tensor& input, std::optional<DType>& params) {
  if (!t.defined()) return;
  const int64_t C = input.size(1);
  COHORT_CHECK(t.dim() == 1 && t.size(0) == C, "batch_norm: expected ", what, " of shape [", C,
               "] (the channels of input ", input.sizes(), "), got ", what, " of shape ", t.sizes());
  const bool mixed = is_reduced_floating_point(input.dtype()) && t.dtype() == kFloat32;
  COHORT_CHECK_AS(TypeError, t.dtype() == input.dtype() || mixed, "batch_norm: expected ", what,
                  " to have the dtype of input (", input.dtype(), ")",
                  is_reduced_floating_point(input.dtype()) ? " or float32" : "", ", got ", t.dtype(),
                  "; hint: convert the module with .to(", input.dtype(), ")");
  COHORT_CHECK_AS(TypeError, !params || *params == t.dtype(), "batch_norm: expected weight, bias and the running ",
                  "statistics to share one dtype (", input.dtype(), " or float32 with a ", input.dtype(),
                  " input), got ", what, " of ", t.dtype(), " after ", *params);
  params = t.dtype();
  detail::check_same_device("batch_norm", input, t);
}

// The backward of batch_norm composed of differentiable ops, for create_graph (the fused kernel writes
// its results without a graph). In training the statistics are functions of x and are recomputed
// from it, so that their derivatives are part of the graph; in evaluation they are constants.
// x [N, C, ...]; w [C] or undefined; mean, invstd [C] (float64) are the forward's.
// A float32 weight with a narrow x gets float32 gradients for itself and the bias.
std::vector<Tensor> batch_norm_backward_composed(const Tensor& g, const Tensor& x, const Tensor& w,
                                                 const Tensor& mean, const Tensor& invstd, bool training, double eps,
                                                 bool x_grad, bool w_grad, bool b_grad, DType param_dtype) {
  Shape channel_shape(static_cast<size_t>(x.dim()), 1);
  channel_shape[1] = x.size(1);
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  const IntArrayRef r(dims);
  Tensor xmu, istd;
  if (training) {
    xmu = x - x.mean(r, true);
    istd = rsqrt((xmu * xmu).mean(r, true) + eps);
  } else {
    xmu = x - mean.to(x.dtype()).view(channel_shape);
    istd = invstd.to(x.dtype()).view(channel_shape);
  }
  Tensor xhat = xmu * istd;
  Tensor gw = w.defined() ? g * w.to(x.dtype()).view(channel_shape) : g;
  Tensor dx;
  if (x_grad) dx = training ? istd * (gw - gw.mean(r, true) - xhat * (gw * xhat).mean(r, true)) : gw * istd;
  return {dx, w_grad ? (g * xhat).sum(r).to(param_dtype) : Tensor(), b_grad ? g.sum(r).to(param_dtype) : Tensor()};
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> batch_norm_with_stats(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                         const Tensor& running_mean, const Tensor& running_var,
                                                         bool training, double momentum, double eps) {
  trace::OpScope trace("batch_norm");
  trace.refuse_if(training, "in training mode (it would normalise with the batch's statistics); hint: call "
                  "module->eval() first");
  detail::check_defined("batch_norm", input);
  COHORT_CHECK(input.dim() >= 2, "batch_norm: expected an input [N, C, ...] of at least 2 dims, got input of shape ",
               input.sizes());
  COHORT_CHECK_AS(TypeError, is_floating_point(input.dtype()),
                  "batch_norm: expected a floating-point input (float32, float64, bfloat16 or float16), got ",
                  input.dtype());
  std::optional<DType> params;
  check_per_channel(weight, "weight", input, params);
  check_per_channel(bias, "bias", input, params);
  check_per_channel(running_mean, "running_mean", input, params);
  check_per_channel(running_var, "running_var", input, params);
  const DType param_dtype = params.value_or(input.dtype());
  COHORT_CHECK(running_mean.defined() == running_var.defined(),
               "batch_norm: running_mean and running_var must both be defined or both undefined");
  const int64_t C = input.size(1);
  if (training) {
    COHORT_CHECK(input.numel() > C, "batch_norm: expected more than 1 value per channel when training, got input of "
                                    "shape ", input.sizes());
  } else {
    COHORT_CHECK(running_mean.defined(), "batch_norm: running_mean and running_var must be defined in evaluation "
                                         "mode; hint: pass training=true to normalise with batch statistics");
  }

  Tensor out = detail::make_empty(input.sizes(), input.dtype(), input.device());
  Tensor mean = detail::make_empty({C}, kFloat64, input.device()), invstd = detail::make_empty({C}, kFloat64, input.device());
  kernel::batch_norm_forward(out, mean, invstd, input, weight, bias, running_mean, running_var, training, momentum, eps);
  // The running statistics were updated in place: their version moves, as any in-place write's does
  // (replica synchronisation and saved-tensor checks rely on it).
  if (training && running_mean.defined()) {
    running_mean.unsafe_impl()->storage()->bump_version();
    running_var.unsafe_impl()->storage()->bump_version();
  }
  const bool x_grad = input.requires_grad(), w_grad = weight.defined() && weight.requires_grad(),
             b_grad = bias.defined() && bias.requires_grad();
  Tensor var;
  {
    NoGradGuard no_grad;
    var = invstd.pow(-2.0).sub_(eps);  // exact to float64 rounding: the kernel's invstd is 1 / sqrt(var + eps)
  }
  Tensor y = autograd::record("NativeBatchNormBackward0", out, {input, weight, bias},
                          [=, sx = SavedTensor(input), sw = SavedTensor(weight)](const Tensor& g) {
    const Tensor x = sx.unpack(), w = sw.unpack();
    if (GradMode::is_enabled())  // create_graph
      return batch_norm_backward_composed(g, x, w, mean, invstd, training, eps, x_grad, w_grad, b_grad, param_dtype);
    Tensor dx = x_grad ? detail::make_empty(x.sizes(), g.dtype(), g.device()) : Tensor();
    Tensor dw = w_grad ? detail::make_empty({C}, param_dtype, g.device()) : Tensor();
    Tensor db = b_grad ? detail::make_empty({C}, param_dtype, g.device()) : Tensor();
    kernel::batch_norm_backward(dx, dw, db, g, x, w, mean, invstd, training);
    return std::vector<Tensor>{dx, dw, db};
  });
  if (trace) trace.record({input, weight, bias, running_mean, running_var}, y, {{"eps", eps}});
  return {y, mean, var};
}

Tensor batch_norm(const Tensor& input, const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                  const Tensor& running_var, bool training, double momentum, double eps) {
  return std::get<0>(batch_norm_with_stats(input, weight, bias, running_mean, running_var, training, momentum, eps));
}

std::pair<Tensor, Tensor> batch_norm_stats(const Tensor& input) {
  detail::check_defined("batch_norm_stats", input);
  COHORT_CHECK(input.dim() >= 2 && input.numel() > 0,
               "batch_norm_stats: expected a non-empty input [N, C, ...] of at least 2 dims, got input of shape ",
               input.sizes());
  COHORT_CHECK_AS(TypeError, is_floating_point(input.dtype()),
                  "batch_norm_stats: expected a floating-point input (float32, float64, bfloat16 or float16), got ",
                  input.dtype());
  NoGradGuard no_grad;
  const Tensor x = input.contiguous();
  const int64_t C = x.size(1);
  Tensor mean = detail::make_empty({C}, kFloat64, x.device()), m2 = detail::make_empty({C}, kFloat64, x.device());
  kernel::batch_norm_stats(mean, m2, x);
  return {mean, m2.div_(static_cast<double>(x.numel() / C))};
}

}  // namespace cohort
