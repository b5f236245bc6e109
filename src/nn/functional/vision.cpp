// interpolate's options resolved to the upsample ops (sizes from scale factors, PyTorch's checks);
// pixel_shuffle, pixel_unshuffle, affine_grid and grid_sample's to their ops.
#include "cohort/nn/functional/vision.h"

#include <cmath>

#include "cohort/core/error.h"
#include "cohort/ops/grid_sample.h"
#include "cohort/ops/interpolate.h"
#include "cohort/ops/pixel_shuffle.h"

namespace cohort::nn::functional {

Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options) {
  COHORT_CHECK(input.defined(), "interpolate: the input is an undefined tensor");
  COHORT_CHECK(input.dim() == 4, "interpolate: expected a 4-d input [N, C, H, W] (2-d interpolation), got shape ",
               input.sizes(), "; 1-d and 3-d interpolation are not implemented");
  const bool nearest = options.mode() == InterpolateMode::kNearest;
  COHORT_CHECK(!nearest || !options.align_corners().has_value(),
               "interpolate: align_corners can only be set with mode kBilinear, got mode kNearest");
  COHORT_CHECK(!nearest || !options.antialias(), "interpolate: antialias applies to mode kBilinear only, got kNearest");
  COHORT_CHECK(options.size().has_value() != options.scale_factor().has_value(),
               "interpolate: give exactly one of size and scale_factor, got ",
               options.size() ? "both" : "neither");
  std::vector<int64_t> size;
  std::optional<double> sh, sw;
  if (options.size()) {
    size = *options.size();
    if (size.size() == 1) size.assign(2, size.front());
    COHORT_CHECK(size.size() == 2, "interpolate: size must have 1 or 2 values for a 4-d input, got ", size.size());
  } else {
    std::vector<double> f = *options.scale_factor();
    if (f.size() == 1) f.assign(2, f.front());
    COHORT_CHECK(f.size() == 2 && f[0] > 0 && f[1] > 0 && std::isfinite(f[0]) && std::isfinite(f[1]),
                 "interpolate: scale_factor must be 1 or 2 positive finite values for a 4-d input, got ",
                 options.scale_factor()->size(), " values, the first ", options.scale_factor()->empty() ? 0.0 : f[0]);
    size = {static_cast<int64_t>(std::floor(static_cast<double>(input.size(2)) * f[0])),
            static_cast<int64_t>(std::floor(static_cast<double>(input.size(3)) * f[1]))};
    if (!options.recompute_scale_factor().value_or(false)) sh = f[0], sw = f[1];
  }
  if (nearest) return upsample_nearest2d(input, size, sh, sw);
  return upsample_bilinear2d(input, size, options.align_corners().value_or(false), sh, sw, options.antialias());
}

Tensor pixel_shuffle(const Tensor& input, const PixelShuffleFuncOptions& options) {
  return cohort::pixel_shuffle(input, options.upscale_factor());
}

Tensor pixel_unshuffle(const Tensor& input, const PixelUnshuffleFuncOptions& options) {
  return cohort::pixel_unshuffle(input, options.downscale_factor());
}

Tensor affine_grid(const Tensor& theta, IntArrayRef size, bool align_corners) {
  return cohort::affine_grid_generator(theta, size, align_corners);
}

Tensor grid_sample(const Tensor& input, const Tensor& grid, const GridSampleFuncOptions& options) {
  const int64_t mode = options.mode() == InterpolateMode::kBilinear ? 0 : 1;
  const int64_t padding = static_cast<int64_t>(options.padding_mode());  // kZeros 0, kBorder 1, kReflection 2
  return cohort::grid_sampler(input, grid, mode, padding, options.align_corners().value_or(false));
}

}  // namespace cohort::nn::functional
