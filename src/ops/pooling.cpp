// max/avg/adaptive 2-d pooling: argument checks, PyTorch's output sizes, and the autograd nodes.
// Kernels: ops/cpu/pooling_kernels.h. Differentiable to any order (Note [Pooling double backward]).
#include "cohort/ops/pooling.h"

#include "cohort/ops/indexing.h"
#include "cohort/ops/shape.h"
#include "ops/cpu/pooling_kernels.h"
#include "ops/internal.h"
#include "cohort/autograd/trace.h"

namespace cohort {

namespace {

// The input as [N, C, H, W] (adding the batch dim of an unbatched [C, H, W]), after the common checks.
Tensor as_batched(const char* op, const Tensor& input) {
  detail::check_defined(op, input);
  COHORT_CHECK(input.dim() == 3 || input.dim() == 4, op, ": expected a 3-d (unbatched) or 4-d (batched) input ",
               "[N, C, H, W], got input of shape ", input.sizes());
  COHORT_CHECK_AS(TypeError, is_floating_point(input.dtype()), op,
                  ": expected a floating-point input, got ", input.dtype());
  for (int64_t d = 0; d < input.dim(); ++d)
    COHORT_CHECK(input.size(d) > 0 || (d == 0 && input.dim() == 4), op, ": expected non-empty channel and spatial ",
                 "dims, got input of shape ", input.sizes());
  return input.dim() == 4 ? input : input.unsqueeze(0);
}

Tensor unbatch_like(const Tensor& out, const Tensor& input) { return input.dim() == 4 ? out : out.squeeze(0); }

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Checks one pooling geometry and returns its kernel parameters and output sizes (PyTorch's
// pooling_output_shape: ceil_mode drops a last window that starts in the right padding).
kernel::Pool2dParams geometry(const char* op, const Tensor& x, const Tensor& input, IntArrayRef kernel_size,
                              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                              Shape& out_sizes) {
  const auto k = detail::expand_param<2>(op, "kernel_size", kernel_size);
  const auto s = stride.empty() ? k : detail::expand_param<2>(op, "stride", stride);
  const auto pad = detail::expand_param<2>(op, "padding", padding);
  const auto dil = detail::expand_param<2>(op, "dilation", dilation);
  kernel::Pool2dParams p;
  out_sizes = {x.size(0), x.size(1), 0, 0};
  for (int d = 0; d < 2; ++d) {
    COHORT_CHECK(k[d] > 0, op, ": kernel_size must be positive, got kernel_size=", k);
    COHORT_CHECK(s[d] > 0, op, ": stride must be positive, got stride=", s);
    COHORT_CHECK(dil[d] > 0, op, ": dilation must be positive, got dilation=", dil);
    COHORT_CHECK(pad[d] >= 0 && pad[d] <= k[d] / 2, op, ": padding should be at most half of kernel_size, got padding=",
                 pad, " and kernel_size=", k);
    const int64_t size = x.size(2 + d), span = dil[d] * (k[d] - 1) + 1;
    COHORT_CHECK(span <= size + 2 * pad[d], op, ": window of kernel_size=", k, " (spanning ", span,
                 ") is larger than the padded input (", size + 2 * pad[d], " = ", size, " + ", 2 * pad[d],
                 " padding in spatial dim ", d, " of input ", input.sizes(), ")");
    int64_t n = floor_div(size + 2 * pad[d] - span + (ceil_mode ? s[d] - 1 : 0), s[d]) + 1;
    if (ceil_mode && (n - 1) * s[d] >= size + pad[d]) --n;
    COHORT_CHECK(n > 0, op, ": output size is too small, got ", n, " for spatial dim ", d, " of input ", input.sizes());
    out_sizes[2 + d] = n;
    p.kernel[d] = k[d], p.stride[d] = s[d], p.padding[d] = pad[d], p.dilation[d] = dil[d];
  }
  return p;
}

// Output size of an adaptive pool, checked.
Shape adaptive_sizes(const char* op, const Tensor& x, const Tensor& input, IntArrayRef output_size) {
  const auto size = detail::expand_param<2>(op, "output_size", output_size);
  Shape out_sizes{x.size(0), x.size(1), 0, 0};
  for (int d = 0; d < 2; ++d) {
    out_sizes[2 + d] = size[d];
    COHORT_CHECK(size[d] > 0, op, ": output_size must be positive, got ", size[d], " for spatial dim ", d,
                 " of input ", input.sizes());
  }
  return out_sizes;
}

// Note [Pooling double backward]
// Every pooling backward is linear in the gradient g, so its own backward depends on g alone:
// max pools scatter g to each window's argmax, and the backward of that gathers from the same
// indices; average pools spread g over each window, the transpose of the forward, so the backward
// of their backward is the forward pool again. Each backward records that node, so pools are
// differentiable to any order under create_graph; without it recording is skipped.

// dx [N, C, H, W]: g [N, C, P, Q] added at the flat plane positions `indices`; node names it.
Tensor max_pool_backward(const char* node, const Tensor& g, const Tensor& indices, const Shape& x_sizes) {
  Tensor dx = detail::make_empty(x_sizes, g.dtype(), g.device());
  kernel::max_pool2d_backward(dx, g, indices);
  return autograd::record(node, dx, {g}, [indices](const Tensor& gg) {
    const int64_t N = indices.size(0), C = indices.size(1);
    Tensor picked = gather(gg.reshape({N, C, -1}), 2, indices.reshape({N, C, -1}));
    return std::vector<Tensor>{picked.reshape(indices.sizes())};
  });
}

Tensor avg_pool_backward(const Tensor& g, const kernel::Pool2dParams& p, const Shape& x_sizes);

Tensor avg_pool_forward(const Tensor& x, const kernel::Pool2dParams& p, const Shape& out_sizes) {
  Tensor out = detail::make_empty(out_sizes, x.dtype(), x.device());
  kernel::avg_pool2d_forward(out, x, p);
  return autograd::record("AvgPool2DBackward0", out, {x}, [p, x_sizes = x.sizes().vec()](const Tensor& g) {
    return std::vector<Tensor>{avg_pool_backward(g, p, x_sizes)};
  });
}

Tensor avg_pool_backward(const Tensor& g, const kernel::Pool2dParams& p, const Shape& x_sizes) {
  Tensor dx = detail::make_empty(x_sizes, g.dtype(), g.device());
  kernel::avg_pool2d_backward(dx, g, p);
  return autograd::record("AvgPool2DBackwardBackward0", dx, {g}, [p, g_sizes = g.sizes().vec()](const Tensor& gg) {
    return std::vector<Tensor>{avg_pool_forward(gg, p, g_sizes)};
  });
}

Tensor adaptive_avg_pool_backward(const Tensor& g, const Shape& x_sizes);

Tensor adaptive_avg_pool_forward(const Tensor& x, const Shape& out_sizes) {
  Tensor out = detail::make_empty(out_sizes, x.dtype(), x.device());
  kernel::adaptive_avg_pool2d_forward(out, x);
  return autograd::record("AdaptiveAvgPool2DBackward0", out, {x}, [x_sizes = x.sizes().vec()](const Tensor& g) {
    return std::vector<Tensor>{adaptive_avg_pool_backward(g, x_sizes)};
  });
}

Tensor adaptive_avg_pool_backward(const Tensor& g, const Shape& x_sizes) {
  Tensor dx = detail::make_empty(x_sizes, g.dtype(), g.device());
  kernel::adaptive_avg_pool2d_backward(dx, g);
  return autograd::record("AdaptiveAvgPool2DBackwardBackward0", dx, {g}, [g_sizes = g.sizes().vec()](const Tensor& gg) {
    return std::vector<Tensor>{adaptive_avg_pool_forward(gg, g_sizes)};
  });
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  const char* op = "max_pool2d";
  trace::OpScope trace(op);
  Tensor x = as_batched(op, self);
  Shape out_sizes;
  const auto p = geometry(op, x, self, kernel_size, stride, padding, dilation, ceil_mode, out_sizes);
  Tensor out = detail::make_empty(out_sizes, x.dtype(), x.device());
  Tensor indices = kernel::max_pool2d_forward(out, x, p);
  out = autograd::record("MaxPool2DWithIndicesBackward0", out, {x},
                         [indices, x_sizes = x.sizes().vec()](const Tensor& g) {
    return std::vector<Tensor>{max_pool_backward("MaxPool2DWithIndicesBackwardBackward0", g, indices, x_sizes)};
  });
  out = unbatch_like(out, self);
  if (trace)
    trace.record({self}, out, {{"kernel_size", trace::ints(p.kernel)}, {"stride", trace::ints(p.stride)},
                 {"padding", trace::ints(p.padding)}, {"dilation", trace::ints(p.dilation)},
                 {"ceil_mode", int64_t{ceil_mode}}});
  return {out, unbatch_like(indices, self)};
}

Tensor max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode));
}

Tensor avg_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  bool ceil_mode, bool count_include_pad) {
  const char* op = "avg_pool2d";
  trace::OpScope trace(op);
  Tensor x = as_batched(op, self);
  Shape out_sizes;
  auto p = geometry(op, x, self, kernel_size, stride, padding, 1, ceil_mode, out_sizes);
  p.count_include_pad = count_include_pad;
  Tensor out = unbatch_like(avg_pool_forward(x, p, out_sizes), self);
  if (trace)
    trace.record({self}, out, {{"kernel_size", trace::ints(p.kernel)}, {"stride", trace::ints(p.stride)},
                 {"padding", trace::ints(p.padding)}, {"ceil_mode", int64_t{ceil_mode}},
                 {"count_include_pad", int64_t{count_include_pad}}});
  return out;
}

Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size) {
  const char* op = "adaptive_avg_pool2d";
  trace::OpScope trace(op);
  Tensor x = as_batched(op, self);
  Tensor out = unbatch_like(adaptive_avg_pool_forward(x, adaptive_sizes(op, x, self, output_size)), self);
  if (trace) trace.record({self}, out);
  return out;
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& self, IntArrayRef output_size) {
  const char* op = "adaptive_max_pool2d";
  trace::OpScope trace(op);
  Tensor x = as_batched(op, self);
  const Shape out_sizes = adaptive_sizes(op, x, self, output_size);
  Tensor out = detail::make_empty(out_sizes, x.dtype(), x.device());
  Tensor indices = detail::make_empty(out_sizes, kInt64, x.device());
  kernel::adaptive_max_pool2d_forward(out, indices, x);
  out = autograd::record("AdaptiveMaxPool2DBackward0", out, {x},
                         [indices, x_sizes = x.sizes().vec()](const Tensor& g) {
    return std::vector<Tensor>{max_pool_backward("AdaptiveMaxPool2DBackwardBackward0", g, indices, x_sizes)};
  });
  out = unbatch_like(out, self);
  if (trace) trace.record({self}, out);
  return {out, unbatch_like(indices, self)};
}

}  // namespace cohort
