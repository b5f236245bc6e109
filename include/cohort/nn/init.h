// Initialisers (PyTorch's nn.init): each fills a tensor in place without recording autograd and
// returns it. Draws come from the default generator (manual_seed makes them repeatable).
#pragma once

#include <string>
#include <utility>

#include "cohort/core/tensor.h"

namespace cohort::nn::init {

enum class FanMode { FanIn, FanOut };
enum class Nonlinearity { Linear, Conv, Sigmoid, Tanh, ReLU, LeakyReLU };

// The recommended gain for a nonlinearity (LeakyReLU uses `param` as its negative slope).
double calculate_gain(Nonlinearity nonlinearity, double param = 0.01);
// fan_in = size(1) * receptive field, fan_out = size(0) * receptive field; needs >= 2 dims.
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t);

Tensor uniform_(Tensor t, double low = 0, double high = 1);
Tensor normal_(Tensor t, double mean = 0, double std = 1);
Tensor constant_(Tensor t, const Scalar& value);
Tensor zeros_(Tensor t);
Tensor ones_(Tensor t);
Tensor xavier_uniform_(Tensor t, double gain = 1);
Tensor xavier_normal_(Tensor t, double gain = 1);
Tensor kaiming_uniform_(Tensor t, double a = 0, FanMode mode = FanMode::FanIn,
                        Nonlinearity nonlinearity = Nonlinearity::LeakyReLU);
Tensor kaiming_normal_(Tensor t, double a = 0, FanMode mode = FanMode::FanIn,
                       Nonlinearity nonlinearity = Nonlinearity::LeakyReLU);

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
