// Initialisers, following the formulas of PyTorch's nn.init.
#include "cohort/nn/init.h"

#include <cmath>

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"

namespace cohort::nn::init {

double calculate_gain(NonlinearityType nonlinearity, double param) {
  switch (nonlinearity.nonlinearity()) {
    case Nonlinearity::Linear:
    case Nonlinearity::Conv:
    case Nonlinearity::Sigmoid: return 1.0;
    case Nonlinearity::Tanh: return 5.0 / 3.0;
    case Nonlinearity::ReLU: return std::sqrt(2.0);
    case Nonlinearity::LeakyReLU: return std::sqrt(2.0 / (1 + param * param));
    case Nonlinearity::SELU: return 0.75;  // PyTorch's choice, for self-normalising networks
  }
  return 1.0;
}

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& t) {
  COHORT_CHECK(t.dim() >= 2, "init: fan in and fan out can not be computed for a tensor with fewer than 2 dimensions, got shape ",
               t.sizes());
  int64_t receptive = 1;
  for (int64_t d = 2; d < t.dim(); ++d) receptive *= t.size(d);
  return {t.size(1) * receptive, t.size(0) * receptive};
}

namespace {
thread_local bool t_skip_random = false;
}  // namespace

SkipRandomInitGuard::SkipRandomInitGuard() : previous_(t_skip_random) { t_skip_random = true; }
SkipRandomInitGuard::~SkipRandomInitGuard() { t_skip_random = previous_; }

Tensor uniform_(Tensor t, double low, double high) {
  NoGradGuard no_grad;
  if (t_skip_random) return t.fill_(0);
  return t.copy_(rand(t.sizes(), TensorOptions(t.dtype()).device(t.device())) * (high - low) + low);
}

Tensor normal_(Tensor t, double mean, double std) {
  NoGradGuard no_grad;
  if (t_skip_random) return t.fill_(0);
  return t.copy_(randn(t.sizes(), TensorOptions(t.dtype()).device(t.device())) * std + mean);
}

Tensor constant_(Tensor t, const Scalar& value) {
  NoGradGuard no_grad;
  return t.fill_(value);
}

Tensor zeros_(Tensor t) { return constant_(std::move(t), 0); }
Tensor ones_(Tensor t) { return constant_(std::move(t), 1); }

Tensor xavier_uniform_(Tensor t, double gain) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  double bound = gain * std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  return uniform_(std::move(t), -bound, bound);
}

Tensor xavier_normal_(Tensor t, double gain) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  return normal_(std::move(t), 0, gain * std::sqrt(2.0 / static_cast<double>(fan_in + fan_out)));
}

namespace {
double kaiming_std(const Tensor& t, double a, FanModeType mode, NonlinearityType nonlinearity) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  int64_t fan = mode.mode() == FanMode::FanIn ? fan_in : fan_out;
  COHORT_CHECK(fan > 0, "init: initializing a zero-element tensor of shape ", t.sizes());
  return calculate_gain(nonlinearity, a) / std::sqrt(static_cast<double>(fan));
}
}  // namespace

Tensor kaiming_uniform_(Tensor t, double a, FanModeType mode, NonlinearityType nonlinearity) {
  double bound = std::sqrt(3.0) * kaiming_std(t, a, mode, nonlinearity);
  return uniform_(std::move(t), -bound, bound);
}

Tensor kaiming_normal_(Tensor t, double a, FanModeType mode, NonlinearityType nonlinearity) {
  return normal_(std::move(t), 0, kaiming_std(t, a, mode, nonlinearity));
}

}  // namespace cohort::nn::init
