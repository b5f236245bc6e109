// The Linear layer and its functional form.
#include "cohort/nn/linear.h"

#include <cmath>
#include <ostream>

#include "cohort/nn/init.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/linalg.h"
#include "cohort/ops/pointwise.h"

namespace cohort::nn {

LinearImpl::LinearImpl(const LinearOptions& options_) : options(options_) { reset(); }

void LinearImpl::reset() {
  COHORT_CHECK(options.in_features() >= 0 && options.out_features() >= 0,
               "Linear: feature counts must be non-negative, got in_features=", options.in_features(),
               " out_features=", options.out_features());
  weight = register_parameter("weight", empty({options.out_features(), options.in_features()}));
  bias = register_parameter("bias", options.bias() ? empty({options.out_features()}) : Tensor(), options.bias());
  reset_parameters();
}

void LinearImpl::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    double bound = options.in_features() > 0 ? 1.0 / std::sqrt(static_cast<double>(options.in_features())) : 0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor LinearImpl::forward(const Tensor& input) { return functional::linear(input, weight, bias); }

void LinearImpl::pretty_print(std::ostream& os) const {
  os << "Linear(in_features=" << options.in_features() << ", out_features=" << options.out_features()
     << ", bias=" << (options.bias() ? "True" : "False") << ")";
}

namespace functional {

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  return cohort::linear(input, weight, bias);
}

}  // namespace functional

}  // namespace cohort::nn
