// The functional norms: layer and group norm are ops (ops/normalization.h) with nn's option
// structs; instance_norm is batch_norm over a [1, N * C, ...] view (PyTorch's own composition),
// rms_norm, normalize and local_response_norm are composed of pointwise ops and reductions.
#include "cohort/nn/functional/normalization.h"

#include <limits>
#include <numeric>

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/normalization.h"
#include "cohort/ops/padding.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"

namespace cohort::nn::functional {

Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& o) {
  return cohort::layer_norm(input, o.normalized_shape(), o.weight(), o.bias(), o.eps());
}

Tensor group_norm(const Tensor& input, const GroupNormFuncOptions& o) {
  return cohort::group_norm(input, o.num_groups(), o.weight(), o.bias(), o.eps());
}

namespace {

void check_per_channel(const Tensor& t, const char* what, int64_t channels, const Tensor& input) {
  if (!t.defined()) return;
  COHORT_CHECK(t.dim() == 1 && t.size(0) == channels, "instance_norm: ", what, " must be [", channels,
               "] (one per channel of input ", input.sizes(), "), got ", t.sizes());
}

Tensor repeat_if_defined(const Tensor& t, int64_t times) { return t.defined() ? t.repeat({times}) : t; }

}  // namespace

Tensor instance_norm(const Tensor& input, const InstanceNormFuncOptions& o) {
  COHORT_CHECK(input.defined(), "instance_norm: input is undefined");
  COHORT_CHECK(input.dim() >= 3, "instance_norm: expected input [N, C, ...] with at least one dim after C, got ",
               input.dim(), " dims ", input.sizes());
  const int64_t N = input.size(0), C = input.size(1);
  check_per_channel(o.weight(), "weight", C, input);
  check_per_channel(o.bias(), "bias", C, input);
  check_per_channel(o.running_mean(), "running_mean", C, input);
  check_per_channel(o.running_var(), "running_var", C, input);
  COHORT_CHECK(o.running_mean().defined() == o.running_var().defined(),
               "instance_norm: running_mean and running_var must be both defined or both undefined");
  COHORT_CHECK(o.use_input_stats() || o.running_mean().defined(),
               "instance_norm: use_input_stats(false) needs running_mean and running_var; hint: pass them, or "
               "normalise with the input's statistics");
  if (o.use_input_stats()) {
    const int64_t spatial = input.numel() / std::max<int64_t>(N * C, 1);
    COHORT_CHECK(spatial > 1 || input.numel() == 0,
                 "instance_norm: expected more than 1 value per channel when using the input's statistics, got input ",
                 input.sizes());
  }
  // Each (sample, channel) is one channel of a batch of one.
  Shape shape = input.sizes();
  shape[0] = 1;
  shape[1] = N * C;
  Tensor running_mean = repeat_if_defined(o.running_mean(), N), running_var = repeat_if_defined(o.running_var(), N);
  Tensor out = cohort::batch_norm(input.contiguous().view(shape), repeat_if_defined(o.weight(), N),
                                  repeat_if_defined(o.bias(), N), running_mean, running_var, o.use_input_stats(),
                                  o.momentum(), o.eps());
  if (running_mean.defined() && o.use_input_stats()) {
    NoGradGuard guard;
    o.running_mean().copy_(running_mean.view({N, C}).mean({0}));
    o.running_var().copy_(running_var.view({N, C}).mean({0}));
  }
  return out.view(input.sizes());
}

Tensor rms_norm(const Tensor& input, const RMSNormFuncOptions& o) {
  COHORT_CHECK(input.defined(), "rms_norm: input is undefined");
  const auto& shape = o.normalized_shape();
  const int64_t n = static_cast<int64_t>(shape.size());
  bool matches = n <= input.dim();
  for (int64_t i = 0; matches && i < n; ++i) matches = input.size(input.dim() - n + i) == shape[i];
  COHORT_CHECK(matches, "rms_norm: expected an input whose last dims are normalized_shape=", IntArrayRef(shape),
               ", got input of shape ", input.sizes());
  if (o.weight().defined())
    COHORT_CHECK(o.weight().sizes() == IntArrayRef(shape), "rms_norm: weight must have normalized_shape ",
                 IntArrayRef(shape), ", got ", o.weight().sizes());
  COHORT_CHECK_AS(TypeError, input.is_floating_point(), "rms_norm: expected a floating-point input, got ",
                  input.dtype());
  // bfloat16 and float16 compute in float32 and round once, as PyTorch's; eps is then float32's.
  const bool narrow = input.dtype() == kBFloat16 || input.dtype() == kFloat16;
  const DType compute = narrow ? kFloat32 : input.dtype();
  const double eps = o.eps() ? *o.eps()
                     : compute == kFloat64 ? std::numeric_limits<double>::epsilon()
                                           : static_cast<double>(std::numeric_limits<float>::epsilon());
  std::vector<int64_t> dims(static_cast<size_t>(n));
  std::iota(dims.begin(), dims.end(), input.dim() - n);
  Tensor x = input.to(compute);
  Tensor y = (x * rsqrt((x * x).mean(dims, true) + eps)).to(input.dtype());
  return o.weight().defined() ? y * o.weight() : y;
}

Tensor normalize(const Tensor& input, NormalizeFuncOptions o) {
  COHORT_CHECK(input.defined(), "normalize: input is undefined");
  Tensor y = input / clamp_min(norm(input, o.p(), {o.dim()}, true), o.eps());
  if (!o.out()) return y;
  Tensor out = *o.out();
  COHORT_CHECK(out.sizes() == input.sizes() && out.dtype() == y.dtype(), "normalize: out must be ", y.dtype(),
               input.sizes(), " (the input's shape and the result's dtype), got ", out.dtype(), out.sizes());
  out.copy_(y);
  return out;
}

Tensor local_response_norm(const Tensor& input, const LocalResponseNormFuncOptions& o) {
  COHORT_CHECK(input.defined(), "local_response_norm: input is undefined");
  COHORT_CHECK(input.dim() >= 3, "local_response_norm: expected input [N, C, ...] with at least 3 dims, got ",
               input.dim(), " dims ", input.sizes());
  COHORT_CHECK(o.size() >= 1, "local_response_norm: size must be at least 1, got ", o.size());
  const int64_t C = input.size(1), size = o.size();
  // Squares padded with zeros along C (size / 2 before, (size - 1) / 2 after), then each window's
  // mean, zeros included (PyTorch's average pool over the padded channels).
  Tensor sq = (input * input).transpose(1, input.dim() - 1);
  Tensor padded = constant_pad_nd(sq, {size / 2, (size - 1) / 2});
  Tensor sum = padded.narrow(-1, 0, C);
  for (int64_t j = 1; j < size; ++j) sum = sum + padded.narrow(-1, j, C);
  Tensor div = pow(sum.transpose(1, input.dim() - 1) * (o.alpha() / static_cast<double>(size)) + o.k(), o.beta());
  return input / div;
}

}  // namespace cohort::nn::functional
