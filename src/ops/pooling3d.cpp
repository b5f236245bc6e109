// max/avg/adaptive 3-d pooling: the checks and output sizes shared with the 2-d pools
// (ops/pooling_internal.h), the 3-d kernels (ops/cpu/pooling_kernels.h) and the autograd nodes,
// differentiable to any order (Note [Pooling double backward] in pooling.cpp).
#include "cohort/ops/pooling.h"

#include "cohort/autograd/record.h"
#include "ops/cpu/pooling_kernels.h"
#include "ops/internal.h"
#include "ops/pooling_internal.h"

namespace cohort {

namespace {

constexpr int64_t kSpatial = 3;

kernel::Pool3dParams params(const detail::PoolShape& g) {
  kernel::Pool3dParams p;
  for (int d = 0; d < 3; ++d)
    p.kernel[d] = g.kernel[d], p.stride[d] = g.stride[d], p.padding[d] = g.padding[d], p.dilation[d] = g.dilation[d];
  return p;
}

Tensor avg_pool_backward(const Tensor& g, const kernel::Pool3dParams& p, const Shape& x_sizes);

Tensor avg_pool_forward(const Tensor& x, const kernel::Pool3dParams& p, const Shape& out_sizes) {
  Tensor out = detail::make_empty(out_sizes, x.dtype(), x.device());
  kernel::avg_pool3d_forward(out, x, p);
  return autograd::record("AvgPool3DBackward0", out, {x}, [p, x_sizes = x.sizes().vec()](const Tensor& g) {
    return std::vector<Tensor>{avg_pool_backward(g, p, x_sizes)};
  });
}

Tensor avg_pool_backward(const Tensor& g, const kernel::Pool3dParams& p, const Shape& x_sizes) {
  Tensor dx = detail::make_empty(x_sizes, g.dtype(), g.device());
  kernel::avg_pool3d_backward(dx, g, p);
  return autograd::record("AvgPool3DBackwardBackward0", dx, {g}, [p, g_sizes = g.sizes().vec()](const Tensor& gg) {
    return std::vector<Tensor>{avg_pool_forward(gg, p, g_sizes)};
  });
}

Tensor adaptive_avg_pool_backward(const Tensor& g, const Shape& x_sizes);

Tensor adaptive_avg_pool_forward(const Tensor& x, const Shape& out_sizes) {
  Tensor out = detail::make_empty(out_sizes, x.dtype(), x.device());
  kernel::adaptive_avg_pool3d_forward(out, x);
  return autograd::record("AdaptiveAvgPool3DBackward0", out, {x}, [x_sizes = x.sizes().vec()](const Tensor& g) {
    return std::vector<Tensor>{adaptive_avg_pool_backward(g, x_sizes)};
  });
}

Tensor adaptive_avg_pool_backward(const Tensor& g, const Shape& x_sizes) {
  Tensor dx = detail::make_empty(x_sizes, g.dtype(), g.device());
  kernel::adaptive_avg_pool3d_backward(dx, g);
  return autograd::record("AdaptiveAvgPool3DBackwardBackward0", dx, {g}, [g_sizes = g.sizes().vec()](const Tensor& gg) {
    return std::vector<Tensor>{adaptive_avg_pool_forward(gg, g_sizes)};
  });
}

// A max pool's output recorded with its indices' backward.
Tensor record_max(const char* node, const char* backward_node, const Tensor& out, const Tensor& x,
                  const Tensor& indices) {
  return autograd::record(node, out, {x}, [backward_node, indices, x_sizes = x.sizes().vec()](const Tensor& g) {
    return std::vector<Tensor>{detail::max_pool_backward(backward_node, g, indices, x_sizes)};
  });
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  const char* op = "max_pool3d";
  Tensor x = detail::pool_batched(op, self, kSpatial);
  const auto g = detail::pool_shape(op, x, self, kSpatial, kernel_size, stride, padding, dilation, ceil_mode);
  Tensor out = detail::make_empty(g.out_sizes, x.dtype(), x.device());
  Tensor indices = detail::make_empty(g.out_sizes, kInt64, x.device());
  kernel::max_pool3d_forward(out, indices, x, params(g));
  out = record_max("MaxPool3DWithIndicesBackward0", "MaxPool3DWithIndicesBackwardBackward0", out, x, indices);
  return {detail::unbatch_like(out, self, kSpatial), detail::unbatch_like(indices, self, kSpatial)};
}

Tensor max_pool3d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(max_pool3d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode));
}

Tensor avg_pool3d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  bool ceil_mode, bool count_include_pad) {
  const char* op = "avg_pool3d";
  Tensor x = detail::pool_batched(op, self, kSpatial);
  const auto g = detail::pool_shape(op, x, self, kSpatial, kernel_size, stride, padding, 1, ceil_mode);
  auto p = params(g);
  p.count_include_pad = count_include_pad;
  return detail::unbatch_like(avg_pool_forward(x, p, g.out_sizes), self, kSpatial);
}

Tensor adaptive_avg_pool3d(const Tensor& self, IntArrayRef output_size) {
  const char* op = "adaptive_avg_pool3d";
  Tensor x = detail::pool_batched(op, self, kSpatial);
  const Shape out_sizes = detail::adaptive_pool_sizes(op, x, self, kSpatial, output_size);
  return detail::unbatch_like(adaptive_avg_pool_forward(x, out_sizes), self, kSpatial);
}

std::tuple<Tensor, Tensor> adaptive_max_pool3d(const Tensor& self, IntArrayRef output_size) {
  const char* op = "adaptive_max_pool3d";
  Tensor x = detail::pool_batched(op, self, kSpatial);
  const Shape out_sizes = detail::adaptive_pool_sizes(op, x, self, kSpatial, output_size);
  Tensor out = detail::make_empty(out_sizes, x.dtype(), x.device());
  Tensor indices = detail::make_empty(out_sizes, kInt64, x.device());
  kernel::adaptive_max_pool3d_forward(out, indices, x);
  out = record_max("AdaptiveMaxPool3DBackward0", "AdaptiveMaxPool3DBackwardBackward0", out, x, indices);
  return {detail::unbatch_like(out, self, kSpatial), detail::unbatch_like(indices, self, kSpatial)};
}

}  // namespace cohort
