// The LayerNorm and GroupNorm layers: parameters, initialisation and PyTorch's reprs.
#include "cohort/nn/normalization.h"

#include <ostream>
#include <sstream>
#include <string>

#include "cohort/nn/init.h"
#include "cohort/ops/creation.h"

namespace cohort::nn {

namespace {

// A double as Python's repr prints it in the common cases: 1e-05, 0.1, 1.0.
std::string python_float(double v) {
  std::ostringstream os;
  os << v;
  std::string s = os.str();
  if (s.find_first_of(".ein") == std::string::npos) s += ".0";
  return s;
}

}  // namespace

void LayerNormImpl::reset() {
  const auto& shape = options.normalized_shape();
  COHORT_CHECK(!shape.empty(), "LayerNorm: normalized_shape must have at least one dim, got ", IntArrayRef(shape));
  for (int64_t s : shape)
    COHORT_CHECK(s > 0, "LayerNorm: normalized_shape must be positive, got ", IntArrayRef(shape));
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
  os << "LayerNorm((";  // normalized_shape as a Python tuple: (5,) or (3, 4)
  const auto& shape = options.normalized_shape();
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << (shape.size() == 1 ? ",)" : ")") << ", eps=" << python_float(options.eps())
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

}  // namespace cohort::nn
