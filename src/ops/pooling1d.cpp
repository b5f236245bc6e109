// 1-d pooling as the 2-d pools over a unit H dim: [N, C, L] is pooled as [N, C, 1, L] with a 1 x k
// window, which gives the same values, the same flat indices (h * L + l with h = 0) and the 2-d
// pools' gradients. The 1-d arguments are checked first, so errors name the 1-d op and its values.
#include "cohort/ops/pooling.h"

#include "ops/internal.h"
#include "ops/pooling_internal.h"

namespace cohort {

namespace {

constexpr int64_t kSpatial = 1;

// The (checked) input as [(N,) C, 1, L].
Tensor as_plane(const Tensor& self) { return self.unsqueeze(-2); }
Tensor as_line(const Tensor& out) { return out.squeeze(-2); }

// The 1-d geometry, checked with the 1-d op's name and values.
detail::PoolShape checked(const char* op, const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                          IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  const Tensor x = detail::pool_batched(op, self, kSpatial);
  return detail::pool_shape(op, x, self, kSpatial, kernel_size, stride, padding, dilation, ceil_mode);
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  const auto g = checked("max_pool1d", self, kernel_size, stride, padding, dilation, ceil_mode);
  auto [out, indices] = max_pool2d_with_indices(as_plane(self), {1, g.kernel[0]}, {1, g.stride[0]},
                                                {0, g.padding[0]}, {1, g.dilation[0]}, ceil_mode);
  return {as_line(out), as_line(indices)};
}

Tensor max_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(max_pool1d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode));
}

Tensor avg_pool1d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  bool ceil_mode, bool count_include_pad) {
  const auto g = checked("avg_pool1d", self, kernel_size, stride, padding, 1, ceil_mode);
  return as_line(avg_pool2d(as_plane(self), {1, g.kernel[0]}, {1, g.stride[0]}, {0, g.padding[0]},
                            ceil_mode, count_include_pad));
}

Tensor adaptive_avg_pool1d(const Tensor& self, IntArrayRef output_size) {
  const char* op = "adaptive_avg_pool1d";
  const Tensor x = detail::pool_batched(op, self, kSpatial);
  const Shape sizes = detail::adaptive_pool_sizes(op, x, self, kSpatial, output_size);
  return as_line(adaptive_avg_pool2d(as_plane(self), {1, sizes.back()}));
}

std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& self, IntArrayRef output_size) {
  const char* op = "adaptive_max_pool1d";
  const Tensor x = detail::pool_batched(op, self, kSpatial);
  const Shape sizes = detail::adaptive_pool_sizes(op, x, self, kSpatial, output_size);
  auto [out, indices] = adaptive_max_pool2d(as_plane(self), {1, sizes.back()});
  return {as_line(out), as_line(indices)};
}

}  // namespace cohort
