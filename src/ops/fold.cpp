// im2col and col2im, composed of existing ops: im2col stacks the kH kW strided slices of the padded
// image, one per kernel tap; col2im, its adjoint, spreads each tap's plane back to its strided
// positions (zeros between) at the tap's offset and sums the taps. Autograd differentiates both.
// N batch, C channels, H W image, kH kW kernel, P Q blocks per dim, L = P Q.
#include "cohort/ops/fold.h"

#include <vector>

#include "cohort/ops/padding.h"
#include "cohort/ops/shape.h"
#include "ops/internal.h"

namespace cohort {

namespace {

struct Blocks {
  ExpandingArray<2> kernel = 1, dilation = 1, padding = 0, stride = 1;
  int64_t P = 0, Q = 0;  // blocks along H and W
};

// Checks the geometry for an image of `size` and counts its blocks.
Blocks blocks(const char* op, IntArrayRef size, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
              IntArrayRef stride) {
  Blocks b;
  b.kernel = detail::expand_param<2>(op, "kernel_size", kernel_size);
  b.dilation = detail::expand_param<2>(op, "dilation", dilation);
  b.padding = detail::expand_param<2>(op, "padding", padding);
  b.stride = detail::expand_param<2>(op, "stride", stride);
  int64_t count[2];
  for (int d = 0; d < 2; ++d) {
    COHORT_CHECK(b.kernel[d] > 0, op, ": kernel_size must be positive, got kernel_size=", b.kernel);
    COHORT_CHECK(b.dilation[d] > 0, op, ": dilation must be positive, got dilation=", b.dilation);
    COHORT_CHECK(b.stride[d] > 0, op, ": stride must be positive, got stride=", b.stride);
    COHORT_CHECK(b.padding[d] >= 0, op, ": padding must be non-negative, got padding=", b.padding);
    const int64_t span = b.dilation[d] * (b.kernel[d] - 1) + 1, padded = size[d] + 2 * b.padding[d];
    COHORT_CHECK(span <= padded, op, ": kernel_size=", b.kernel, " with dilation=", b.dilation, " spans ", span,
                 ", more than the padded image (", padded, " = ", size[d], " + ", 2 * b.padding[d],
                 " padding in spatial dim ", d, " of image size ", size, ")");
    count[d] = (padded - span) / b.stride[d] + 1;
  }
  b.P = count[0], b.Q = count[1];
  return b;
}

// The pad list of constant_pad_nd that pads only `dim` of a tensor of `rank` dims.
std::vector<int64_t> pad_only(int64_t rank, int64_t dim, int64_t before, int64_t after) {
  std::vector<int64_t> pad(static_cast<size_t>(2 * (rank - dim)), 0);
  pad[pad.size() - 2] = before, pad.back() = after;
  return pad;
}

// t's entries along dim placed at before + i stride in a zero line of length total.
Tensor spread(const Tensor& t, int64_t dim, int64_t stride, int64_t before, int64_t total) {
  const int64_t n = t.size(dim), len = (n - 1) * stride + 1;
  Tensor s = t;
  if (stride > 1 && n > 1) {  // [.., n, ..] -> [.., n, stride, ..] with zeros after each entry, flattened, tail cut
    Tensor wide = constant_pad_nd(t.unsqueeze(dim + 1), pad_only(t.dim() + 1, dim + 1, 0, stride - 1));
    Shape sizes = t.sizes().vec();
    sizes[dim] = n * stride;
    s = wide.reshape(sizes).narrow(dim, 0, len);
  }
  return constant_pad_nd(s, pad_only(s.dim(), dim, before, total - before - len));
}

}  // namespace

Tensor im2col(const Tensor& self, IntArrayRef kernel_size, IntArrayRef dilation, IntArrayRef padding,
              IntArrayRef stride) {
  const char* op = "im2col";
  detail::check_defined(op, self);
  COHORT_CHECK(self.dim() == 3 || self.dim() == 4, op, ": expected a 3-d (unbatched) or 4-d (batched) input ",
               "[N, C, H, W], got input of shape ", self.sizes());
  const Tensor x = self.dim() == 4 ? self : self.unsqueeze(0);
  const int64_t N = x.size(0), C = x.size(1);
  const Blocks b = blocks(op, {x.size(2), x.size(3)}, kernel_size, dilation, padding, stride);
  const bool padded = b.padding[0] > 0 || b.padding[1] > 0;
  const Tensor xp = padded ? constant_pad_nd(x, {b.padding[1], b.padding[1], b.padding[0], b.padding[0]}) : x;
  std::vector<Tensor> taps;
  for (int64_t i = 0; i < b.kernel[0]; ++i)
    for (int64_t j = 0; j < b.kernel[1]; ++j) {
      const int64_t h = i * b.dilation[0], w = j * b.dilation[1];
      taps.push_back(slice(slice(xp, 2, h, h + (b.P - 1) * b.stride[0] + 1, b.stride[0]), 3, w,
                           w + (b.Q - 1) * b.stride[1] + 1, b.stride[1]));
    }
  // [N, C, kH kW, P, Q] -> [N, C kH kW, P Q]
  Tensor out = stack(taps, 2).reshape({N, C * b.kernel[0] * b.kernel[1], b.P * b.Q});
  return self.dim() == 4 ? out : out.squeeze(0);
}

Tensor col2im(const Tensor& self, IntArrayRef output_size, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride) {
  const char* op = "col2im";
  detail::check_defined(op, self);
  COHORT_CHECK(self.dim() == 2 || self.dim() == 3, op, ": expected a 2-d (unbatched) or 3-d (batched) input ",
               "[N, C kH kW, L], got input of shape ", self.sizes());
  const auto size = detail::expand_param<2>(op, "output_size", output_size);
  COHORT_CHECK(size[0] > 0 && size[1] > 0, op, ": output_size must be positive, got output_size=", size);
  const Tensor cols = self.dim() == 3 ? self : self.unsqueeze(0);
  const Blocks b = blocks(op, size, kernel_size, dilation, padding, stride);
  const int64_t N = cols.size(0), taps = b.kernel[0] * b.kernel[1];
  COHORT_CHECK(cols.size(1) % taps == 0, op, ": expected the channels of input ", self.sizes(),
               " to be divisible by the product of kernel_size=", b.kernel, " (", taps, "), got ", cols.size(1));
  COHORT_CHECK(cols.size(2) == b.P * b.Q, op, ": expected input ", self.sizes(), " to have ", b.P, " * ", b.Q, " = ",
               b.P * b.Q, " blocks (output_size=", size, ", kernel_size=", b.kernel, ", dilation=", b.dilation,
               ", padding=", b.padding, ", stride=", b.stride, "), got ", cols.size(2));
  const int64_t C = cols.size(1) / taps, Hp = size[0] + 2 * b.padding[0], Wp = size[1] + 2 * b.padding[1];
  const Tensor planes = cols.reshape({N, C, taps, b.P, b.Q});
  Tensor sum;
  for (int64_t i = 0; i < b.kernel[0]; ++i)
    for (int64_t j = 0; j < b.kernel[1]; ++j) {
      const Tensor tap = planes.select(2, i * b.kernel[1] + j);
      const Tensor placed = spread(spread(tap, 2, b.stride[0], i * b.dilation[0], Hp), 3, b.stride[1],
                                   j * b.dilation[1], Wp);
      sum = sum.defined() ? sum + placed : placed;
    }
  Tensor out = sum.narrow(2, b.padding[0], size[0]).narrow(3, b.padding[1], size[1]);
  if (b.padding[0] > 0 || b.padding[1] > 0) out = out.contiguous();
  return self.dim() == 3 ? out : out.squeeze(0);
}

}  // namespace cohort
