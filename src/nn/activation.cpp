// The activation layers' option checks, PReLU's parameter, Softmax2d's rank check, and printing
// as PyTorch's repr (floats as Python prints them where PyTorch's defaults are floats).
#include "cohort/nn/activation.h"

#include <ostream>
#include <sstream>
#include <string>

#include "cohort/nn/init.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/reduction.h"
#include "python_repr.h"

namespace cohort::nn {

namespace {

using detail::python_float;
using detail::python_repr;

const char* inplace_suffix(bool inplace) { return inplace ? ", inplace=True" : ""; }
const char* inplace_only(bool inplace) { return inplace ? "inplace=True" : ""; }

}  // namespace

void HardtanhImpl::reset() {
  COHORT_CHECK(options.max_val() > options.min_val(), "Hardtanh: max_val must be greater than min_val, got min_val=",
               options.min_val(), " and max_val=", options.max_val());
}

void CELUImpl::reset() {
  COHORT_CHECK(options.alpha() != 0, "CELU: alpha must not be 0 (it divides the input), got ", options.alpha());
}

void SoftshrinkImpl::reset() {
  COHORT_CHECK(options.lambda() >= 0, "Softshrink: lambda must be at least 0, got ", options.lambda());
}

void RReLUImpl::reset() {
  COHORT_CHECK(options.lower() <= options.upper(), "RReLU: lower must not exceed upper, got lower=", options.lower(),
               " and upper=", options.upper());
}

Tensor RReLUImpl::forward(const Tensor& x) {
  return functional::rrelu(x, functional::RReLUFuncOptions()
                                  .lower(options.lower())
                                  .upper(options.upper())
                                  .training(is_training())
                                  .inplace(options.inplace()));
}

Tensor Softmax2dImpl::forward(const Tensor& x) {
  COHORT_CHECK(x.dim() == 3 || x.dim() == 4, "Softmax2d: expected a 3-d [C, H, W] or 4-d [N, C, H, W] input, got ",
               x.dim(), " dims ", x.sizes());
  return functional::softmax(x, -3);
}

void PReLUImpl::reset() {
  COHORT_CHECK(options.num_parameters() >= 1, "PReLU: num_parameters must be at least 1, got ",
               options.num_parameters());
  weight = register_parameter("weight", cohort::empty({options.num_parameters()}));
  reset_parameters();
}

void PReLUImpl::reset_parameters() {
  init::constant_(weight, options.init());
}

void ReLUImpl::pretty_print(std::ostream& os) const { os << "ReLU(" << inplace_only(options.inplace()) << ")"; }
void ReLU6Impl::pretty_print(std::ostream& os) const { os << "ReLU6(" << inplace_only(options.inplace()) << ")"; }
void SELUImpl::pretty_print(std::ostream& os) const { os << "SELU(" << inplace_only(options.inplace()) << ")"; }
void LeakyReLUImpl::pretty_print(std::ostream& os) const {
  os << "LeakyReLU(negative_slope=" << options.negative_slope() << inplace_suffix(options.inplace()) << ")";
}
void GELUImpl::pretty_print(std::ostream& os) const { os << "GELU(approximate='" << options.approximate() << "')"; }
void ELUImpl::pretty_print(std::ostream& os) const {
  os << "ELU(alpha=" << python_float(options.alpha()) << inplace_suffix(options.inplace()) << ")";
}
void CELUImpl::pretty_print(std::ostream& os) const {
  os << "CELU(alpha=" << python_float(options.alpha()) << inplace_suffix(options.inplace()) << ")";
}
void HardtanhImpl::pretty_print(std::ostream& os) const {
  os << "Hardtanh(min_val=" << python_float(options.min_val()) << ", max_val=" << python_float(options.max_val())
     << inplace_suffix(options.inplace()) << ")";
}
// PyTorch's defaults here are the ints 1 and 20, which Python prints without a point.
void SoftplusImpl::pretty_print(std::ostream& os) const {
  os << "Softplus(beta=" << options.beta() << ", threshold=" << options.threshold() << ")";
}
void SoftshrinkImpl::pretty_print(std::ostream& os) const { os << "Softshrink(" << options.lambda() << ")"; }
void HardshrinkImpl::pretty_print(std::ostream& os) const { os << "Hardshrink(" << options.lambda() << ")"; }
void ThresholdImpl::pretty_print(std::ostream& os) const {
  os << "Threshold(threshold=" << python_float(options.threshold()) << ", value=" << python_float(options.value())
     << inplace_suffix(options.inplace()) << ")";
}
void SoftmaxImpl::pretty_print(std::ostream& os) const { os << "Softmax(dim=" << options.dim() << ")"; }
void LogSoftmaxImpl::pretty_print(std::ostream& os) const { os << "LogSoftmax(dim=" << options.dim() << ")"; }
void SoftminImpl::pretty_print(std::ostream& os) const { os << "Softmin(dim=" << options.dim() << ")"; }
void Softmax2dImpl::pretty_print(std::ostream& os) const { os << "Softmax2d()"; }
void PReLUImpl::pretty_print(std::ostream& os) const { os << "PReLU(num_parameters=" << options.num_parameters() << ")"; }
void GLUImpl::pretty_print(std::ostream& os) const { os << "GLU(dim=" << options.dim() << ")"; }
void RReLUImpl::pretty_print(std::ostream& os) const {
  os << "RReLU(lower=" << python_repr(options.lower()) << ", upper=" << python_repr(options.upper())
     << inplace_suffix(options.inplace()) << ")";
}
void SiLUImpl::pretty_print(std::ostream& os) const { os << "SiLU()"; }
void MishImpl::pretty_print(std::ostream& os) const { os << "Mish()"; }
void SigmoidImpl::pretty_print(std::ostream& os) const { os << "Sigmoid()"; }
void TanhImpl::pretty_print(std::ostream& os) const { os << "Tanh()"; }
void LogSigmoidImpl::pretty_print(std::ostream& os) const { os << "LogSigmoid()"; }
void SoftsignImpl::pretty_print(std::ostream& os) const { os << "Softsign()"; }
void TanhshrinkImpl::pretty_print(std::ostream& os) const { os << "Tanhshrink()"; }

}  // namespace cohort::nn
