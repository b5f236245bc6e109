// affine_grid_generator and grid_sampler composed of existing ops: the grid is a product of the
// normalised pixel coordinates with theta, and sampling gathers the corner pixels of each grid
// point and weights them, so autograd gives the gradients w.r.t. input, grid and theta (to any
// order). N batch, C channels, H W input, Ho Wo output.
#include "cohort/ops/grid_sample.h"

#include <vector>

#include "cohort/ops/creation.h"
#include "cohort/ops/indexing.h"
#include "cohort/ops/linalg.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/shape.h"
#include "ops/internal.h"

namespace cohort {

namespace {

// The normalised coordinates of `steps` pixels along one dim, in dtype (PyTorch's linspace_from_neg_one).
Tensor coordinates(int64_t steps, bool align_corners, const TensorOptions& options) {
  if (steps <= 1) return zeros({steps}, options);
  Tensor c = linspace(-1, 1, steps, options);
  return align_corners ? c : c * (static_cast<double>(steps - 1) / static_cast<double>(steps));
}

// floor(t) with no gradient (floor's is zero almost everywhere): truncation toward zero, one less
// where that rounded up. t is finite and within int64.
Tensor floor_of(const Tensor& t) {
  const Tensor v = t.detach();
  const Tensor truncated = v.to(kInt64).to(v.dtype());
  return where(lt(v, truncated), truncated - 1, truncated);
}

// PyTorch's grid_sampler_unnormalize: [-1, 1] to pixel coordinates.
Tensor unnormalize(const Tensor& coord, int64_t size, bool align_corners) {
  if (align_corners) return (coord + 1) / 2 * static_cast<double>(size - 1);
  return ((coord + 1) * static_cast<double>(size) - 1) / 2;
}

// PyTorch's reflect_coordinates: c reflected into [twice_low / 2, twice_high / 2] (whole spans of
// reflections folded by their parity).
Tensor reflect(const Tensor& c, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return zeros_like(c);
  const double low = static_cast<double>(twice_low) / 2, span = static_cast<double>(twice_high - twice_low) / 2;
  const Tensor in = (c - low).abs();
  const Tensor flips = floor_of(in / span);
  const Tensor extra = in - flips * span;
  const Tensor even = eq(floor_of(flips / 2) * 2, flips);
  return where(even, extra + low, span - extra + low);
}

// The source coordinate of a grid coordinate along a dim of `size` pixels, with the padding mode.
Tensor source_index(const Tensor& coord, int64_t size, int64_t padding_mode, bool align_corners) {
  Tensor c = unnormalize(coord, size, align_corners);
  if (padding_mode == 2) c = align_corners ? reflect(c, 0, 2 * (size - 1)) : reflect(c, -1, 2 * size - 1);
  if (padding_mode != 0) c = clamp(c, 0.0, static_cast<double>(size - 1));
  return c;
}

// Pixels of flat [N, C, H W] at integer-valued coordinates (x, y) [N, Ho, Wo], zero outside.
Tensor pick(const Tensor& flat, const Tensor& x, const Tensor& y, int64_t H, int64_t W) {
  const int64_t N = flat.size(0), C = flat.size(1), Ho = x.size(1), Wo = x.size(2);
  const Tensor inside = logical_and(logical_and(ge(x, 0.0), le(x, static_cast<double>(W - 1))),
                                    logical_and(ge(y, 0.0), le(y, static_cast<double>(H - 1))));
  const Tensor at = (clamp(y, 0.0, static_cast<double>(H - 1)) * static_cast<double>(W) +
                     clamp(x, 0.0, static_cast<double>(W - 1)))
                        .to(kInt64)
                        .reshape({N, 1, Ho * Wo})
                        .expand({N, C, Ho * Wo});
  const Tensor values = gather(flat, 2, at).reshape({N, C, Ho, Wo});
  return values * inside.unsqueeze(1).to(flat.dtype());
}

}  // namespace

Tensor affine_grid_generator(const Tensor& theta, IntArrayRef size, bool align_corners) {
  const char* op = "affine_grid";
  detail::check_defined(op, theta, "theta");
  COHORT_CHECK_AS(TypeError, is_floating_point(theta.dtype()), op, ": expected a floating-point theta, got ",
                  theta.dtype());
  COHORT_CHECK(size.size() == 4 || size.size() == 5, op, ": expected a 4-d size [N, C, H, W] (2-d transform) or a ",
               "5-d size [N, C, D, H, W] (3-d transform), got size ", size);
  const int64_t spatial = static_cast<int64_t>(size.size()) - 2;
  COHORT_CHECK(theta.dim() == 3 && theta.size(0) == size[0] && theta.size(1) == spatial &&
                   theta.size(2) == spatial + 1,
               op, ": expected theta of shape [", size[0], ", ", spatial, ", ", spatial + 1, "] for size ", size,
               ", got theta of shape ", theta.sizes());
  for (int64_t s : size) COHORT_CHECK(s > 0, op, ": expected positive sizes, got size ", size);
  const TensorOptions options = TensorOptions(theta.dtype()).device(theta.device());
  // base [*spatial, spatial + 1]: (x, y[, z], 1) per output pixel, x varying fastest.
  std::vector<Tensor> axes;  // x, y[, z]: over W, H[, D]
  for (int64_t d = 0; d < spatial; ++d) axes.push_back(coordinates(size[size.size() - 1 - d], align_corners, options));
  const Shape grid_sizes(size.begin() + 2, size.end());
  std::vector<Tensor> columns;
  for (int64_t d = 0; d < spatial; ++d) {
    Shape view(static_cast<size_t>(spatial), 1);
    view[static_cast<size_t>(spatial - 1 - d)] = grid_sizes[static_cast<size_t>(spatial - 1 - d)];
    columns.push_back(axes[d].view(view).expand(grid_sizes));
  }
  columns.push_back(ones(grid_sizes, options));
  int64_t points = 1;
  for (int64_t s : grid_sizes) points *= s;
  const Tensor base = stack(columns, -1).reshape({1, points, spatial + 1}).expand({size[0], points, spatial + 1});
  Shape out_sizes{size[0]};
  out_sizes.insert(out_sizes.end(), grid_sizes.begin(), grid_sizes.end());
  out_sizes.push_back(spatial);
  return bmm(base, theta.transpose(1, 2)).reshape(out_sizes);
}

Tensor grid_sampler(const Tensor& input, const Tensor& grid, int64_t interpolation_mode, int64_t padding_mode,
                    bool align_corners) {
  const char* op = "grid_sample";
  detail::check_defined(op, input, "input");
  detail::check_defined(op, grid, "grid");
  COHORT_CHECK(input.dim() == 4, op, ": expected a 4-d input [N, C, H, W], got input of shape ", input.sizes(),
               " (5-d, volumetric sampling is not implemented)");
  COHORT_CHECK(grid.dim() == 4 && grid.size(3) == 2, op, ": expected a grid [N, H_out, W_out, 2], got grid of shape ",
               grid.sizes());
  COHORT_CHECK(grid.size(0) == input.size(0), op, ": expected grid and input to have the same batch size, got grid ",
               grid.sizes(), " and input ", input.sizes());
  COHORT_CHECK_AS(TypeError, is_floating_point(input.dtype()) && grid.dtype() == input.dtype(), op,
                  ": expected floating-point input and grid of one dtype, got ", input.dtype(), " and ", grid.dtype());
  // As PyTorch 1.13, whose CPU grid_sampler has no bfloat16 or float16 kernel (and in the narrow
  // type the coordinates would lose the sample's position).
  COHORT_CHECK_AS(TypeError, !is_reduced_floating_point(input.dtype()), op, ": ", input.dtype(),
                  " inputs are not supported (nor by PyTorch 1.13 on the CPU); hint: sample in float32");
  COHORT_CHECK(input.size(2) > 0 && input.size(3) > 0, op, ": expected a non-empty image, got input of shape ",
               input.sizes());
  COHORT_CHECK(interpolation_mode == 0 || interpolation_mode == 1, op,
               ": interpolation_mode must be 0 (bilinear) or 1 (nearest), got ", interpolation_mode,
               " (bicubic is not implemented)");
  COHORT_CHECK(padding_mode >= 0 && padding_mode <= 2, op,
               ": padding_mode must be 0 (zeros), 1 (border) or 2 (reflection), got ", padding_mode);
  detail::check_same_device(op, input, grid);
  const int64_t N = input.size(0), C = input.size(1), H = input.size(2), W = input.size(3);
  const Tensor ix = source_index(grid.select(3, 0), W, padding_mode, align_corners);
  const Tensor iy = source_index(grid.select(3, 1), H, padding_mode, align_corners);
  const Tensor flat = input.reshape({N, C, H * W});
  // Coordinates far outside only matter as "outside": bound them before the integer conversion.
  auto bounded = [](const Tensor& c, int64_t size) { return clamp(c.detach(), -2.0, static_cast<double>(size + 1)); };
  if (interpolation_mode == 1) {
    // nearbyint: halves go to the even neighbour.
    const Tensor x = bounded(ix, W), y = bounded(iy, H);
    auto round_even = [](const Tensor& c) {
      const Tensor low = floor_of(c), frac = c - low;
      const Tensor low_odd = ne(floor_of(low / 2) * 2, low);
      return where(logical_or(gt(frac, 0.5), logical_and(eq(frac, 0.5), low_odd)), low + 1, low);
    };
    Tensor out = pick(flat, round_even(x), round_even(y), H, W);
    // PyTorch's nearest mode gives the grid a zero gradient rather than none: a zero-valued term
    // that depends on it.
    if (grid.requires_grad()) out = out + ((ix - ix.detach()) * 0 + (iy - iy.detach()) * 0).unsqueeze(1);
    return out;
  }
  const Tensor x0 = floor_of(bounded(ix, W)), y0 = floor_of(bounded(iy, H));
  const Tensor x1 = x0 + 1, y1 = y0 + 1;
  // The weights carry the gradient w.r.t. the grid.
  const Tensor wx1 = ix - x0, wx0 = x1 - ix, wy1 = iy - y0, wy0 = y1 - iy;
  auto weight = [](const Tensor& a, const Tensor& b) { return (a * b).unsqueeze(1); };
  return pick(flat, x0, y0, H, W) * weight(wx0, wy0) + pick(flat, x1, y0, H, W) * weight(wx1, wy0) +
         pick(flat, x0, y1, H, W) * weight(wx0, wy1) + pick(flat, x1, y1, H, W) * weight(wx1, wy1);
}

}  // namespace cohort
