// Initialisers (PyTorch's nn.init): each fills a tensor in place without recording autograd and
// returns it. Draws come from the default generator (manual_seed makes them repeatable).
#pragma once

#include <string>
#include <utility>

#include "cohort/core/enum.h"
#include "cohort/core/tensor.h"

namespace cohort::nn::init {

enum class FanMode { FanIn, FanOut };
enum class Nonlinearity { Linear, Conv, Sigmoid, Tanh, ReLU, LeakyReLU, SELU };

// A fan mode as libtorch spells it (torch::kFanIn, torch::kFanOut) or as a FanMode.
class FanModeType {
 public:
  FanModeType(FanMode mode) : mode_(mode) {}                          // NOLINT
  FanModeType(enumtype::kFanIn) : mode_(FanMode::FanIn) {}            // NOLINT
  FanModeType(enumtype::kFanOut) : mode_(FanMode::FanOut) {}          // NOLINT
  FanMode mode() const { return mode_; }

 private:
  FanMode mode_;
};

// A nonlinearity as libtorch spells it (torch::kReLU, torch::kConv2D, ...) or as a Nonlinearity.
class NonlinearityType {
 public:
  NonlinearityType(Nonlinearity n) : n_(n) {}                                          // NOLINT
  NonlinearityType(enumtype::kLinear) : n_(Nonlinearity::Linear) {}                   // NOLINT
  NonlinearityType(enumtype::kConv1D) : n_(Nonlinearity::Conv) {}                     // NOLINT
  NonlinearityType(enumtype::kConv2D) : n_(Nonlinearity::Conv) {}                     // NOLINT
  NonlinearityType(enumtype::kConv3D) : n_(Nonlinearity::Conv) {}                     // NOLINT
  NonlinearityType(enumtype::kConvTranspose1D) : n_(Nonlinearity::Conv) {}            // NOLINT
  NonlinearityType(enumtype::kConvTranspose2D) : n_(Nonlinearity::Conv) {}            // NOLINT
  NonlinearityType(enumtype::kConvTranspose3D) : n_(Nonlinearity::Conv) {}            // NOLINT
  NonlinearityType(enumtype::kSigmoid) : n_(Nonlinearity::Sigmoid) {}                 // NOLINT
  NonlinearityType(enumtype::kTanh) : n_(Nonlinearity::Tanh) {}                       // NOLINT
  NonlinearityType(enumtype::kReLU) : n_(Nonlinearity::ReLU) {}                       // NOLINT
  NonlinearityType(enumtype::kLeakyReLU) : n_(Nonlinearity::LeakyReLU) {}             // NOLINT
  NonlinearityType(enumtype::kSELU) : n_(Nonlinearity::SELU) {}                       // NOLINT
  Nonlinearity nonlinearity() const { return n_; }

 private:
  Nonlinearity n_;
};

// The recommended gain for a nonlinearity (LeakyReLU uses `param` as its negative slope).
double calculate_gain(NonlinearityType nonlinearity, double param = 0.01);
// fan_in = size(1) * receptive field, fan_out = size(0) * receptive field; needs >= 2 dims.
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t);

Tensor uniform_(Tensor t, double low = 0, double high = 1);
Tensor normal_(Tensor t, double mean = 0, double std = 1);
Tensor constant_(Tensor t, const Scalar& value);
Tensor zeros_(Tensor t);
Tensor ones_(Tensor t);
Tensor xavier_uniform_(Tensor t, double gain = 1);
Tensor xavier_normal_(Tensor t, double gain = 1);
Tensor kaiming_uniform_(Tensor t, double a = 0, FanModeType mode = FanMode::FanIn,
                        NonlinearityType nonlinearity = Nonlinearity::LeakyReLU);
Tensor kaiming_normal_(Tensor t, double a = 0, FanModeType mode = FanMode::FanIn,
                       NonlinearityType nonlinearity = Nonlinearity::LeakyReLU);

// While one is alive on this thread, uniform_, normal_ and the initialisers built on them fill
// zeros instead of drawing (and draw nothing from the generator). Cloneable::clone holds one around
// reset(): the copy's values are overwritten by the source's right after, and drawing them first
// cost ResNet-18 about 0.9 s per copy (DataParallel makes one per device).
class SkipRandomInitGuard {
 public:
  SkipRandomInitGuard();
  ~SkipRandomInitGuard();
  SkipRandomInitGuard(const SkipRandomInitGuard&) = delete;
  SkipRandomInitGuard& operator=(const SkipRandomInitGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace cohort::nn::init
