// layer_norm: argument checks and the autograd node over the fused row kernels of
// ops/cpu/layer_norm_kernels.h, with a composed backward for create_graph. group_norm, and
// layer_norm on what the kernels do not take, composed of mean and the biased variance (autograd
// differentiates them to any order).
#include "cohort/ops/normalization.h"

#include <vector>

#include "cohort/autograd/trace.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/autograd/record.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "ops/cpu/layer_norm_kernels.h"
#include "ops/internal.h"

namespace cohort {

using autograd::SavedTensor;

namespace {

// (x - mean) / sqrt(var + eps) over dims, var biased (divides by the count, as PyTorch's norms do).
Tensor normalize(const Tensor& x, IntArrayRef dims, double eps) {
  Tensor mu = mean(x, dims, /*keepdim=*/true);
  Tensor v = var(x, dims, /*unbiased=*/false, /*keepdim=*/true);
  return mul(sub(x, mu), rsqrt(add(v, eps)));
}

void check_affine(const char* op, const Tensor& t, const char* what, IntArrayRef shape) {
  if (!t.defined()) return;
  COHORT_CHECK(t.sizes() == shape, op, ": expected ", what, " of shape ", shape, ", got ", what, " of shape ", t.sizes());
}

// The backward of layer_norm composed of differentiable ops, for create_graph (the fused kernel
// writes its results without a graph). The statistics are recomputed from x so that their
// derivatives are part of the graph. dims: the normalised (trailing) dims of x.
std::vector<Tensor> layer_norm_backward_composed(const Tensor& g, const Tensor& x, const Tensor& w, IntArrayRef dims,
                                                 IntArrayRef shape, double eps, bool x_grad, bool w_grad,
                                                 bool b_grad) {
  Tensor xmu = x - x.mean(dims, true);
  Tensor istd = rsqrt((xmu * xmu).mean(dims, true) + eps);
  Tensor xhat = xmu * istd;
  Tensor dx, dw, db;
  if (x_grad) {
    Tensor gw = w.defined() ? g * w : g;
    dx = istd * (gw - gw.mean(dims, true) - xhat * (gw * xhat).mean(dims, true));
  }
  if (w_grad) dw = sum_to(g * xhat, shape);
  if (b_grad) db = sum_to(g, shape);
  return {dx, dw, db};
}

// Whether the fused kernels take these arguments: a non-empty floating-point input and weight and
// bias (when given) of its dtype.
bool fusable(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  if (!is_floating_point(input.dtype()) || input.numel() == 0) return false;
  for (const Tensor* t : {&weight, &bias})
    if (t->defined() && t->dtype() != input.dtype()) return false;
  return true;
}

// layer_norm through the fused kernels: one autograd node, NativeLayerNormBackward0.
// dims: the normalised dims of input, shape: their sizes (normalized_shape).
Tensor layer_norm_fused(const Tensor& input, IntArrayRef dims, IntArrayRef shape, const Tensor& weight,
                        const Tensor& bias, double eps) {
  const int64_t N = [&] {
    int64_t n = 1;
    for (int64_t d : dims) n *= input.size(d);
    return n;
  }();
  const int64_t M = input.numel() / N;
  Tensor x = input, w = weight, b = bias;
  {
    NoGradGuard no_grad;
    if (!x.is_contiguous()) x = x.contiguous();
    if (w.defined() && !w.is_contiguous()) w = w.contiguous();
    if (b.defined() && !b.is_contiguous()) b = b.contiguous();
  }
  Tensor out = detail::make_empty(input.sizes(), input.dtype(), input.device());
  Tensor mean = detail::make_empty({M}, kFloat64, input.device()), rstd = detail::make_empty({M}, kFloat64, input.device());
  kernel::layer_norm_forward(out, mean, rstd, x, w, b, eps);
  const bool x_grad = input.requires_grad(), w_grad = weight.defined() && weight.requires_grad(),
             b_grad = bias.defined() && bias.requires_grad();
  std::vector<int64_t> dim_list(dims.begin(), dims.end()), shape_list(shape.begin(), shape.end());
  return autograd::record("NativeLayerNormBackward0", out, {input, weight, bias},
                          [=, sx = SavedTensor(input), sw = SavedTensor(weight)](const Tensor& g) {
    const Tensor xs = sx.unpack(), ws = sw.unpack();
    if (GradMode::is_enabled())  // create_graph
      return layer_norm_backward_composed(g, xs, ws, dim_list, shape_list, eps, x_grad, w_grad, b_grad);
    NoGradGuard no_grad;
    const Tensor gc = g.contiguous(), xc = xs.contiguous(), wc = ws.defined() ? ws.contiguous() : ws;
    Tensor dx = x_grad ? detail::make_empty(xs.sizes(), g.dtype(), g.device()) : Tensor();
    Tensor dw = w_grad ? detail::make_empty(shape_list, g.dtype(), g.device()) : Tensor();
    Tensor db = b_grad ? detail::make_empty(shape_list, g.dtype(), g.device()) : Tensor();
    kernel::layer_norm_backward(dx, dw.defined() ? dw.view({N}) : dw, db.defined() ? db.view({N}) : db, gc, xc,
                                wc.defined() ? wc.view({N}) : wc, mean, rstd);
    return std::vector<Tensor>{dx, dw, db};
  });
}

}  // namespace

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps, bool /*cudnn_enable*/) {
  trace::OpScope trace("layer_norm");
  COHORT_CHECK(input.defined(), "layer_norm: the input tensor is undefined");
  const IntArrayRef shape = normalized_shape;
  const int64_t k = static_cast<int64_t>(shape.size());
  bool ok = k >= 1 && input.dim() >= k;
  for (int64_t i = 0; ok && i < k; ++i) ok = input.size(input.dim() - k + i) == shape[i];
  COHORT_CHECK(ok, "layer_norm: expected an input whose last dims are normalized_shape=", shape,
               ", got input of shape ", input.sizes());
  check_affine("layer_norm", weight, "weight", shape);
  check_affine("layer_norm", bias, "bias", shape);
  std::vector<int64_t> dims;
  for (int64_t d = input.dim() - k; d < input.dim(); ++d) dims.push_back(d);
  Tensor y;
  if (fusable(input, weight, bias)) {
    if (weight.defined()) detail::check_same_device("layer_norm", input, weight);
    if (bias.defined()) detail::check_same_device("layer_norm", input, bias);
    y = layer_norm_fused(input, dims, shape, weight, bias, eps);
  } else {
    y = normalize(input, dims, eps);
    if (weight.defined()) y = mul(y, weight);
    if (bias.defined()) y = add(y, bias);
  }
  if (trace) trace.record({input, weight, bias}, y, {{"normalized_dims", k}, {"eps", eps}});
  return y;
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps,
                  bool /*cudnn_enabled*/) {
  COHORT_CHECK(input.defined(), "group_norm: the input tensor is undefined");
  COHORT_CHECK(input.dim() >= 2, "group_norm: expected an input [N, C, ...] of at least 2 dims, got input of shape ",
               input.sizes());
  const int64_t N = input.size(0), C = input.size(1), G = num_groups;
  COHORT_CHECK(G > 0 && C % G == 0, "group_norm: expected the ", C, " channels of input ", input.sizes(),
               " to divide into num_groups=", G, " groups");
  check_affine("group_norm", weight, "weight", {C});
  check_affine("group_norm", bias, "bias", {C});
  Tensor y = normalize(input.reshape({N, G, -1}), {2}, eps).reshape(input.sizes());
  Shape affine_shape(static_cast<size_t>(input.dim() - 1), 1);  // [C, 1, ...] broadcasts over the trailing dims
  affine_shape[0] = C;
  if (weight.defined()) y = mul(y, weight.reshape(affine_shape));
  if (bias.defined()) y = add(y, bias.reshape(affine_shape));
  return y;
}

}  // namespace cohort
