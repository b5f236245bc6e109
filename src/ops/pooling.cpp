// max/avg/adaptive 2-d pooling (argument checks, output sizes, autograd nodes), and what the 1- and 3-d
// pools share (ops/pooling_internal.h). Kernels: ops/cpu/pooling_kernels.h. Differentiable to any
// order (Note [Pooling double backward]).
#include "cohort/ops/pooling.h"

#include <ostream>

#include "cohort/ops/indexing.h"
#include "cohort/ops/shape.h"
#include "ops/cpu/pooling_kernels.h"
#include "ops/internal.h"
#include "ops/pooling_internal.h"
#include "cohort/autograd/trace.h"

namespace cohort {

namespace detail {

namespace {

const char* layout(int64_t spatial) { return spatial == 1 ? "[N, C, L]" : spatial == 2 ? "[N, C, H, W]" : "[N, C, D, H, W]"; }

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// One value per spatial dim, from one value or one per dim (libtorch's stride=2 or stride={2, 1}).
std::vector<int64_t> expand(const char* op, const char* name, IntArrayRef values, int64_t spatial) {
  COHORT_CHECK(values.size() == 1 || static_cast<int64_t>(values.size()) == spatial, op, ": expected ", name,
               " to have 1 or ", spatial, " values, got ", values.size(), " (", name, "=", values, ")");
  return values.size() == 1 ? std::vector<int64_t>(spatial, values[0]) : values.vec();
}

// Prints per-dim values as a Python tuple, (2, 2) or (3,), as ExpandingArray does.
struct Tuple {
  const std::vector<int64_t>& v;
};
std::ostream& operator<<(std::ostream& os, Tuple t) {
  os << "(";
  for (size_t i = 0; i < t.v.size(); ++i) os << (i ? ", " : "") << t.v[i];
  return os << (t.v.size() == 1 ? ",)" : ")");
}

}  // namespace

Tensor pool_batched(const char* op, const Tensor& input, int64_t spatial) {
  check_defined(op, input);
  COHORT_CHECK(input.dim() == spatial + 1 || input.dim() == spatial + 2, op, ": expected a ", spatial + 1,
               "-d (unbatched) or ", spatial + 2, "-d (batched) input ", layout(spatial), ", got input of shape ",
               input.sizes());
  COHORT_CHECK_AS(TypeError, is_floating_point(input.dtype()), op,
                  ": expected a floating-point input, got ", input.dtype());
  const bool batched = input.dim() == spatial + 2;
  for (int64_t d = 0; d < input.dim(); ++d)
    COHORT_CHECK(input.size(d) > 0 || (d == 0 && batched), op, ": expected non-empty channel and spatial ",
                 "dims, got input of shape ", input.sizes());
  return batched ? input : input.unsqueeze(0);
}

Tensor unbatch_like(const Tensor& out, const Tensor& input, int64_t spatial) {
  return input.dim() == spatial + 2 ? out : out.squeeze(0);
}

PoolShape pool_shape(const char* op, const Tensor& x, const Tensor& input, int64_t spatial, IntArrayRef kernel_size,
                     IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  PoolShape g;
  g.kernel = expand(op, "kernel_size", kernel_size, spatial);
  g.stride = stride.empty() ? g.kernel : expand(op, "stride", stride, spatial);
  g.padding = expand(op, "padding", padding, spatial);
  g.dilation = expand(op, "dilation", dilation, spatial);
  const Tuple k{g.kernel}, s{g.stride}, pad{g.padding}, dil{g.dilation};
  g.out_sizes = {x.size(0), x.size(1)};
  for (int64_t d = 0; d < spatial; ++d) {
    COHORT_CHECK(k.v[d] > 0, op, ": kernel_size must be positive, got kernel_size=", k);
    COHORT_CHECK(s.v[d] > 0, op, ": stride must be positive, got stride=", s);
    COHORT_CHECK(dil.v[d] > 0, op, ": dilation must be positive, got dilation=", dil);
    COHORT_CHECK(pad.v[d] >= 0 && pad.v[d] <= k.v[d] / 2, op, ": padding should be at most half of kernel_size, got padding=",
                 pad, " and kernel_size=", k);
    const int64_t size = x.size(2 + d), span = dil.v[d] * (k.v[d] - 1) + 1;
    COHORT_CHECK(span <= size + 2 * pad.v[d], op, ": window of kernel_size=", k, " (spanning ", span,
                 ") is larger than the padded input (", size + 2 * pad.v[d], " = ", size, " + ", 2 * pad.v[d],
                 " padding in spatial dim ", d, " of input ", input.sizes(), ")");
    int64_t n = floor_div(size + 2 * pad.v[d] - span + (ceil_mode ? s.v[d] - 1 : 0), s.v[d]) + 1;
    if (ceil_mode && (n - 1) * s.v[d] >= size + pad.v[d]) --n;
    COHORT_CHECK(n > 0, op, ": output size is too small, got ", n, " for spatial dim ", d, " of input ", input.sizes());
    g.out_sizes.push_back(n);
  }
  return g;
}

Shape adaptive_pool_sizes(const char* op, const Tensor& x, const Tensor& input, int64_t spatial,
                          IntArrayRef output_size) {
  const auto size = expand(op, "output_size", output_size, spatial);
  Shape out_sizes{x.size(0), x.size(1)};
  for (int64_t d = 0; d < spatial; ++d) {
    COHORT_CHECK(size[d] > 0, op, ": output_size must be positive, got ", size[d], " for spatial dim ", d,
                 " of input ", input.sizes());
    out_sizes.push_back(size[d]);
  }
  return out_sizes;
}

// Note [Pooling double backward]
// Every pooling backward is linear in the gradient g, so its own backward depends on g alone:
// max pools scatter g to each window's argmax, and the backward of that gathers from the same
// indices; average pools spread g over each window, the transpose of the forward, so the backward
// of their backward is the forward pool again. Each backward records that node, so pools are
// differentiable to any order under create_graph; without it recording is skipped.

// The kernel sees every pool as [N, C, rest, last]: indices are flat within each (n, c) volume.
Tensor max_pool_backward(const char* node, const Tensor& g, const Tensor& indices, const Shape& x_sizes) {
  Tensor dx = make_empty(x_sizes, g.dtype(), g.device());
  // [N, C, a, b, c] as [N, C, a b, c]; a 2-d pool's tensors pass unchanged (no -1: N may be 0).
  auto as_4d = [](const Tensor& t) {
    int64_t rest = 1;
    for (int64_t d = 2; d + 1 < t.dim(); ++d) rest *= t.size(d);
    return t.dim() == 4 ? t : t.reshape({t.size(0), t.size(1), rest, t.size(-1)});
  };
  kernel::max_pool2d_backward(as_4d(dx), as_4d(g), as_4d(indices));
  return autograd::record(node, dx, {g}, [indices](const Tensor& gg) {
    const int64_t N = indices.size(0), C = indices.size(1);
    Tensor picked = gather(gg.reshape({N, C, -1}), 2, indices.reshape({N, C, -1}));
    return std::vector<Tensor>{picked.reshape(indices.sizes())};
  });
}

}  // namespace detail

namespace {

using detail::max_pool_backward;

Tensor as_batched(const char* op, const Tensor& input) { return detail::pool_batched(op, input, 2); }
Tensor unbatch_like(const Tensor& out, const Tensor& input) { return detail::unbatch_like(out, input, 2); }

// The 2-d kernels' parameters of one checked geometry.
kernel::Pool2dParams geometry(const char* op, const Tensor& x, const Tensor& input, IntArrayRef kernel_size,
                              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                              Shape& out_sizes) {
  const auto g = detail::pool_shape(op, x, input, 2, kernel_size, stride, padding, dilation, ceil_mode);
  kernel::Pool2dParams p;
  for (int d = 0; d < 2; ++d)
    p.kernel[d] = g.kernel[d], p.stride[d] = g.stride[d], p.padding[d] = g.padding[d], p.dilation[d] = g.dilation[d];
  out_sizes = g.out_sizes;
  return p;
}

Shape adaptive_sizes(const char* op, const Tensor& x, const Tensor& input, IntArrayRef output_size) {
  return detail::adaptive_pool_sizes(op, x, input, 2, output_size);
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
