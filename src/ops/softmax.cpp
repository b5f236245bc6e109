// softmax and log_softmax along one dim, and their backward as ops of their own (one fused kernel
// each way, Note [Softmax rows] and Note [Softmax backward] in cpu/softmax.cpp) whose own backward
// is composed of ops, so derivatives of any order run through the kernels.
#include "cohort/ops/softmax.h"

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/shape.h"
#include "ops/cpu/kernels.h"
#include "ops/cpu/softmax_kernels.h"
#include "ops/internal.h"
#include "cohort/autograd/trace.h"

namespace cohort {

using autograd::SavedTensor;

namespace {

Tensor softmax_impl(const Tensor& x_in, int64_t dim, std::optional<DType> dtype, bool log) {
  const char* op = log ? "log_softmax" : "softmax";
  trace::OpScope trace(op);
  detail::check_defined(op, x_in);
  Tensor x = dtype ? x_in.to(*dtype) : x_in;
  COHORT_CHECK_AS(TypeError, x.is_floating_point(), op, ": expected a floating-point tensor, got ", x.dtype());
  dim = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), op);
  Tensor xc = x.dim() == 0 ? x.reshape({1}) : x;
  Tensor in = detail::cast_nograd(xc, xc.dtype());
  if (!in.is_contiguous()) { NoGradGuard g; in = in.contiguous(); }
  Tensor out = detail::make_empty(in.sizes(), in.dtype(), in.device());
  kernel::softmax(out, in, dim, log);
  if (x.dim() == 0) out = out.reshape({});
  if (trace) trace.record({x_in}, out, {{"dim", dim}});
  return autograd::record(log ? "LogSoftmaxBackward0" : "SoftmaxBackward0", out, {x},
                          [dim, log, dtype = x.dtype(), so = SavedTensor(out, true)](const Tensor& g) {
    const Tensor y = so.unpack();
    return std::vector<Tensor>{log ? _log_softmax_backward_data(g, y, dim, dtype) : _softmax_backward_data(g, y, dim, dtype)};
  });
}

Tensor backward_impl(const Tensor& g_in, const Tensor& y_in, int64_t dim, DType input_dtype, bool log) {
  const char* op = log ? "_log_softmax_backward_data" : "_softmax_backward_data";
  detail::check_defined(op, g_in, "grad_output");
  detail::check_defined(op, y_in, "output");
  COHORT_CHECK(g_in.sizes() == y_in.sizes(), op, ": grad_output ", g_in.sizes(), " and output ", y_in.sizes(),
               " must have the same shape");
  COHORT_CHECK_AS(TypeError, g_in.dtype() == y_in.dtype() && y_in.is_floating_point(), op,
                  ": expected grad_output and output of one floating dtype, got ", g_in.dtype(), " and ", y_in.dtype());
  detail::check_same_device(op, g_in, y_in);
  dim = wrap_dim(dim, std::max<int64_t>(y_in.dim(), 1), op);
  Tensor g = detail::cast_nograd(g_in, g_in.dtype()), y = detail::cast_nograd(y_in, y_in.dtype());
  {
    NoGradGuard no_grad;
    if (y.dim() == 0) g = g.reshape({1}), y = y.reshape({1});
    g = g.contiguous(), y = y.contiguous();
  }
  Tensor gx = detail::make_empty(y.sizes(), y.dtype(), y.device());
  kernel::softmax_backward(gx, g, y, dim, log);
  if (y_in.dim() == 0) gx = gx.reshape({});
  // The second derivatives, composed of ops (G is the gradient of gx):
  //   softmax:     dg = y (G - sum(G y)),   dy = G (g - sum(g y)) - g sum(G y)
  //   log-softmax: dg = G - sum(G exp(y)),  dy = -G exp(y) sum(g)
  gx = autograd::record(log ? "LogSoftmaxBackwardDataBackward0" : "SoftmaxBackwardDataBackward0", gx, {g_in, y_in},
                        [dim, log, sg = SavedTensor(g_in), sy = SavedTensor(y_in)](const Tensor& G) {
    const Tensor gv = sg.unpack(), yv = sy.unpack();
    const std::vector<int64_t> d{dim};
    if (yv.dim() == 0) {  // a single element: gx = g - exp(y) g, or y (g - g y)
      if (log) return std::vector<Tensor>{G - G * exp(yv), -G * exp(yv) * gv};
      return std::vector<Tensor>{yv * (G - G * yv), G * (gv - gv * yv) - gv * (G * yv)};
    }
    if (log) {
      const Tensor e = exp(yv);
      return std::vector<Tensor>{G - (G * e).sum(IntArrayRef(d), true), -(G * e) * gv.sum(IntArrayRef(d), true)};
    }
    const Tensor gy = (G * yv).sum(IntArrayRef(d), true);
    return std::vector<Tensor>{_softmax_backward_data(G, yv, dim, yv.dtype()),
                               G * (gv - (gv * yv).sum(IntArrayRef(d), true)) - gv * gy};
  });
  return gx.dtype() == input_dtype ? gx : gx.to(input_dtype);
}

}  // namespace

Tensor softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype) { return softmax_impl(x, dim, dtype, false); }
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype) { return softmax_impl(x, dim, dtype, true); }

Tensor _softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim, DType input_dtype) {
  return backward_impl(grad_output, output, dim, input_dtype, false);
}
Tensor _log_softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim, DType input_dtype) {
  return backward_impl(grad_output, output, dim, input_dtype, true);
}

}  // namespace cohort
