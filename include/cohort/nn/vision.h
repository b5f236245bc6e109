// Vision layers without parameters (libtorch's torch::nn::PixelShuffle, PixelUnshuffle, Upsample):
//   nn::PixelShuffle ps(nn::PixelShuffleOptions(2));          // [N, 4 C, H, W] -> [N, C, 2 H, 2 W]
//   nn::Upsample up(nn::UpsampleOptions().scale_factor(std::vector<double>{2, 2}).mode(kBilinear));
// forward is the nn::functional form (cohort/nn/functional/vision.h), with its errors. Upsample is
// F::interpolate with the options' size or scale_factor, mode and align_corners (the scale factor
// maps pixels, as PyTorch's Upsample, which never recomputes it); modes kNearest and kBilinear.
// Prints like PyTorch: PixelShuffle(upscale_factor=2), Upsample(scale_factor=2.0, mode=nearest).
#pragma once

#include <optional>
#include <vector>

#include "cohort/nn/functional/vision.h"
#include "cohort/nn/module_holder.h"

namespace cohort::nn {

using PixelShuffleOptions = functional::PixelShuffleFuncOptions;
using PixelUnshuffleOptions = functional::PixelUnshuffleFuncOptions;

class PixelShuffleImpl : public Cloneable<PixelShuffleImpl> {
 public:
  explicit PixelShuffleImpl(const PixelShuffleOptions& options_) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

  PixelShuffleOptions options;
};

class PixelUnshuffleImpl : public Cloneable<PixelUnshuffleImpl> {
 public:
  explicit PixelUnshuffleImpl(const PixelUnshuffleOptions& options_) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

  PixelUnshuffleOptions options;
};

struct UpsampleOptions {
  UpsampleOptions& size(std::optional<std::vector<int64_t>> s) { size_ = std::move(s); return *this; }
  UpsampleOptions& scale_factor(std::optional<std::vector<double>> s) { scale_factor_ = std::move(s); return *this; }
  UpsampleOptions& mode(InterpolateMode m) { mode_ = m; return *this; }
  UpsampleOptions& align_corners(std::optional<bool> a) { align_corners_ = a; return *this; }
  const std::optional<std::vector<int64_t>>& size() const { return size_; }
  const std::optional<std::vector<double>>& scale_factor() const { return scale_factor_; }
  InterpolateMode mode() const { return mode_; }
  std::optional<bool> align_corners() const { return align_corners_; }

 private:
  std::optional<std::vector<int64_t>> size_;
  std::optional<std::vector<double>> scale_factor_;
  InterpolateMode mode_ = InterpolateMode::kNearest;
  std::optional<bool> align_corners_;
};

class UpsampleImpl : public Cloneable<UpsampleImpl> {
 public:
  explicit UpsampleImpl(const UpsampleOptions& options_ = {}) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

  UpsampleOptions options;
};

using PixelShuffle = ModuleHolder<PixelShuffleImpl>;
using PixelUnshuffle = ModuleHolder<PixelUnshuffleImpl>;
using Upsample = ModuleHolder<UpsampleImpl>;

}  // namespace cohort::nn
