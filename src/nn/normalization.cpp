// The LayerNorm, GroupNorm, InstanceNorm1d/2d/3d, RMSNorm and LocalResponseNorm layers: parameters,
// buffers, initialisation and PyTorch's reprs.
#include "cohort/nn/normalization.h"

#include <ostream>
#include <sstream>
#include <string>

#include "cohort/autograd/grad_mode.h"
#include "cohort/nn/init.h"
#include "cohort/ops/creation.h"
#include "python_repr.h"

namespace cohort::nn {

namespace {

using detail::python_float;

void check_normalized_shape(const char* layer, const std::vector<int64_t>& shape) {
  COHORT_CHECK(!shape.empty(), layer, ": normalized_shape must have at least one dim, got ", IntArrayRef(shape));
  for (int64_t s : shape)
    COHORT_CHECK(s > 0, layer, ": normalized_shape must be positive, got ", IntArrayRef(shape));
}

}  // namespace

void LayerNormImpl::reset() {
  const auto& shape = options.normalized_shape();
  check_normalized_shape("LayerNorm", shape);
  const bool affine = options.elementwise_affine();
  weight = register_parameter("weight", affine ? cohort::empty(shape) : Tensor(), affine);
  bias = register_parameter("bias", affine ? cohort::empty(shape) : Tensor(), affine);
  reset_parameters();
}

void LayerNormImpl::reset_parameters() {
  if (!options.elementwise_affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

Tensor LayerNormImpl::forward(const Tensor& input) {
  return functional::layer_norm(
      input, functional::LayerNormFuncOptions(options.normalized_shape()).weight(weight).bias(bias).eps(options.eps()));
}

void LayerNormImpl::pretty_print(std::ostream& os) const {
  os << "LayerNorm(";
  os << detail::python_tuple(options.normalized_shape());
  os << ", eps=" << python_float(options.eps())
     << ", elementwise_affine=" << (options.elementwise_affine() ? "True" : "False") << ")";
}

void GroupNormImpl::reset() {
  const int64_t G = options.num_groups(), C = options.num_channels();
  COHORT_CHECK(G > 0 && C > 0 && C % G == 0, "GroupNorm: num_channels=", C, " must divide into num_groups=", G,
               " groups");
  weight = register_parameter("weight", options.affine() ? cohort::empty({C}) : Tensor(), options.affine());
  bias = register_parameter("bias", options.affine() ? cohort::empty({C}) : Tensor(), options.affine());
  reset_parameters();
}

void GroupNormImpl::reset_parameters() {
  if (!options.affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

Tensor GroupNormImpl::forward(const Tensor& input) {
  return functional::group_norm(
      input, functional::GroupNormFuncOptions(options.num_groups()).weight(weight).bias(bias).eps(options.eps()));
}

void GroupNormImpl::pretty_print(std::ostream& os) const {
  os << "GroupNorm(" << options.num_groups() << ", " << options.num_channels() << ", eps=" << python_float(options.eps())
     << ", affine=" << (options.affine() ? "True" : "False") << ")";
}

template <size_t D, class Derived>
void InstanceNormImplBase<D, Derived>::reset() {
  const int64_t C = options.num_features();
  COHORT_CHECK(C > 0, "InstanceNorm", D, "d: num_features must be positive, got ", C);
  weight = this->register_parameter("weight", options.affine() ? cohort::empty({C}) : Tensor(), options.affine());
  bias = this->register_parameter("bias", options.affine() ? cohort::empty({C}) : Tensor(), options.affine());
  if (options.track_running_stats()) {
    running_mean = this->register_buffer("running_mean", zeros({C}));
    running_var = this->register_buffer("running_var", ones({C}));
    num_batches_tracked = this->register_buffer("num_batches_tracked", zeros({}, kInt64));
  } else {
    running_mean = running_var = num_batches_tracked = Tensor();
  }
  reset_parameters();
}

template <size_t D, class Derived>
void InstanceNormImplBase<D, Derived>::reset_running_stats() {
  if (!options.track_running_stats()) return;
  NoGradGuard no_grad;
  running_mean.zero_();
  running_var.fill_(1);
  num_batches_tracked.zero_();
}

template <size_t D, class Derived>
void InstanceNormImplBase<D, Derived>::reset_parameters() {
  reset_running_stats();
  if (!options.affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

template <size_t D, class Derived>
Tensor InstanceNormImplBase<D, Derived>::forward(const Tensor& input) {
  const int64_t dims = static_cast<int64_t>(D);
  COHORT_CHECK(input.defined() && (input.dim() == dims + 1 || input.dim() == dims + 2), "InstanceNorm", D,
               "d: expected a ", dims + 1, "-d (unbatched) or ", dims + 2, "-d input, got ",
               input.defined() ? input.dim() : 0, " dims ", input.defined() ? input.sizes() : IntArrayRef{});
  // The running statistics are used only in evaluation, and only when tracked (PyTorch's rule).
  const auto o = functional::InstanceNormFuncOptions()
                     .running_mean(running_mean)
                     .running_var(running_var)
                     .weight(weight)
                     .bias(bias)
                     .use_input_stats(this->is_training() || !options.track_running_stats())
                     .momentum(options.momentum())
                     .eps(options.eps());
  if (input.dim() == dims + 1) return functional::instance_norm(input.unsqueeze(0), o).squeeze(0);
  return functional::instance_norm(input, o);
}

template <size_t D, class Derived>
void InstanceNormImplBase<D, Derived>::pretty_print(std::ostream& os) const {
  os << "InstanceNorm" << D << "d(" << options.num_features() << ", eps=" << python_float(options.eps())
     << ", momentum=" << python_float(options.momentum()) << ", affine=" << (options.affine() ? "True" : "False")
     << ", track_running_stats=" << (options.track_running_stats() ? "True" : "False") << ")";
}

template class InstanceNormImplBase<1, InstanceNorm1dImpl>;
template class InstanceNormImplBase<2, InstanceNorm2dImpl>;
template class InstanceNormImplBase<3, InstanceNorm3dImpl>;

void RMSNormImpl::reset() {
  const auto& shape = options.normalized_shape();
  check_normalized_shape("RMSNorm", shape);
  const bool affine = options.elementwise_affine();
  weight = register_parameter("weight", affine ? cohort::empty(shape) : Tensor(), affine);
  reset_parameters();
}

void RMSNormImpl::reset_parameters() {
  if (options.elementwise_affine()) init::ones_(weight);
}

Tensor RMSNormImpl::forward(const Tensor& input) {
  return functional::rms_norm(input,
                              functional::RMSNormFuncOptions(options.normalized_shape()).weight(weight).eps(options.eps()));
}

void RMSNormImpl::pretty_print(std::ostream& os) const {
  os << "RMSNorm(";
  os << detail::python_tuple(options.normalized_shape());
  os << ", eps=" << (options.eps() ? python_float(*options.eps()) : "None")
     << ", elementwise_affine=" << (options.elementwise_affine() ? "True" : "False") << ")";
}

void LocalResponseNormImpl::pretty_print(std::ostream& os) const {
  os << "LocalResponseNorm(" << options.size() << ", alpha=" << python_float(options.alpha())
     << ", beta=" << python_float(options.beta())
     << ", k=" << python_float(options.k()) << ")";
}

}  // namespace cohort::nn
