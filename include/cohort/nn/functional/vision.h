// nn::functional::interpolate, pixel_shuffle, pixel_unshuffle, affine_grid and grid_sample, spelled as libtorch's
// torch::nn::functional ones:
//   F::interpolate(x, F::InterpolateFuncOptions().size(std::vector<int64_t>{224, 224}).mode(torch::kBilinear)
//                         .align_corners(false).antialias(true));
//   F::interpolate(x, F::InterpolateFuncOptions().scale_factor(std::vector<double>{2, 2}));   // nearest
// input [N, C, H, W] float -> [N, C, H_out, W_out]. Exactly one of size and scale_factor; with
// scale_factor the output is floor(H * s) and the factor itself maps pixels (PyTorch's behaviour
// unless recompute_scale_factor(true), which maps by H / H_out). The modes, their rounding and the
// gradient: cohort/ops/interpolate.h. Throws, naming the option, for both or neither of size and
// scale_factor, align_corners with kNearest, antialias with kNearest, or a non-4-d input (PyTorch's
// 1-d and 3-d interpolation, modes linear / bicubic / trilinear / area, are not implemented).
#pragma once

#include <optional>
#include <vector>

#include "cohort/core/tensor.h"

namespace cohort {

enum class InterpolateMode { kNearest, kBilinear };
// libtorch's torch::kNearest / torch::kBilinear.
inline constexpr InterpolateMode kNearest = InterpolateMode::kNearest;
inline constexpr InterpolateMode kBilinear = InterpolateMode::kBilinear;

enum class GridSamplePaddingMode { kZeros, kBorder, kReflection };
// libtorch's torch::kZeros / torch::kBorder / torch::kReflection (grid_sample's padding modes).
inline constexpr GridSamplePaddingMode kZeros = GridSamplePaddingMode::kZeros;
inline constexpr GridSamplePaddingMode kBorder = GridSamplePaddingMode::kBorder;
inline constexpr GridSamplePaddingMode kReflection = GridSamplePaddingMode::kReflection;

namespace nn::functional {

struct InterpolateFuncOptions {
  InterpolateFuncOptions& size(std::optional<std::vector<int64_t>> s) { size_ = std::move(s); return *this; }
  InterpolateFuncOptions& scale_factor(std::optional<std::vector<double>> s) { scale_factor_ = std::move(s); return *this; }
  InterpolateFuncOptions& mode(InterpolateMode m) { mode_ = m; return *this; }
  InterpolateFuncOptions& align_corners(std::optional<bool> a) { align_corners_ = a; return *this; }
  InterpolateFuncOptions& recompute_scale_factor(std::optional<bool> r) { recompute_scale_factor_ = r; return *this; }
  InterpolateFuncOptions& antialias(bool a) { antialias_ = a; return *this; }
  const std::optional<std::vector<int64_t>>& size() const { return size_; }
  const std::optional<std::vector<double>>& scale_factor() const { return scale_factor_; }
  InterpolateMode mode() const { return mode_; }
  std::optional<bool> align_corners() const { return align_corners_; }
  std::optional<bool> recompute_scale_factor() const { return recompute_scale_factor_; }
  bool antialias() const { return antialias_; }

 private:
  std::optional<std::vector<int64_t>> size_;
  std::optional<std::vector<double>> scale_factor_;
  InterpolateMode mode_ = InterpolateMode::kNearest;
  std::optional<bool> align_corners_;
  std::optional<bool> recompute_scale_factor_;
  bool antialias_ = false;
};

Tensor interpolate(const Tensor& input, const InterpolateFuncOptions& options = {});

// Sub-pixel rearrangement (cohort/ops/pixel_shuffle.h): [*, C r^2, H, W] <-> [*, C, H r, W r].
//   F::pixel_shuffle(x, F::PixelShuffleFuncOptions(2))
struct PixelShuffleFuncOptions {
  PixelShuffleFuncOptions(int64_t upscale_factor) : upscale_factor_(upscale_factor) {}  // NOLINT
  PixelShuffleFuncOptions& upscale_factor(int64_t r) { upscale_factor_ = r; return *this; }
  int64_t upscale_factor() const { return upscale_factor_; }

 private:
  int64_t upscale_factor_;
};
struct PixelUnshuffleFuncOptions {
  PixelUnshuffleFuncOptions(int64_t downscale_factor) : downscale_factor_(downscale_factor) {}  // NOLINT
  PixelUnshuffleFuncOptions& downscale_factor(int64_t r) { downscale_factor_ = r; return *this; }
  int64_t downscale_factor() const { return downscale_factor_; }

 private:
  int64_t downscale_factor_;
};

Tensor pixel_shuffle(const Tensor& input, const PixelShuffleFuncOptions& options);
Tensor pixel_unshuffle(const Tensor& input, const PixelUnshuffleFuncOptions& options);

// Spatial transformers (cohort/ops/grid_sample.h has the coordinate rules and errors):
//   Tensor grid = F::affine_grid(theta, {N, C, H, W});                 // theta [N, 2, 3] -> [N, H, W, 2]
//   F::grid_sample(x, grid, F::GridSampleFuncOptions().mode(kBilinear).padding_mode(kBorder).align_corners(true))
// align_corners defaults to false for both (grid_sample's nullopt means false, as libtorch).
Tensor affine_grid(const Tensor& theta, IntArrayRef size, bool align_corners = false);

struct GridSampleFuncOptions {
  GridSampleFuncOptions& mode(InterpolateMode m) { mode_ = m; return *this; }
  GridSampleFuncOptions& padding_mode(GridSamplePaddingMode p) { padding_mode_ = p; return *this; }
  GridSampleFuncOptions& align_corners(std::optional<bool> a) { align_corners_ = a; return *this; }
  InterpolateMode mode() const { return mode_; }
  GridSamplePaddingMode padding_mode() const { return padding_mode_; }
  std::optional<bool> align_corners() const { return align_corners_; }

 private:
  InterpolateMode mode_ = InterpolateMode::kBilinear;
  GridSamplePaddingMode padding_mode_ = GridSamplePaddingMode::kZeros;
  std::optional<bool> align_corners_;
};

Tensor grid_sample(const Tensor& input, const Tensor& grid, const GridSampleFuncOptions& options = {});

}  // namespace nn::functional
}  // namespace cohort
