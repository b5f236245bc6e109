// The Dropout1d, Dropout2d and Dropout3d layers over nn::functional::dropout1d/2d/3d.
#include "cohort/nn/dropout_nd.h"

#include <ostream>

namespace cohort::nn {

namespace {
const char* layer_name(int64_t D) { return D == 1 ? "Dropout1d" : D == 2 ? "Dropout2d" : "Dropout3d"; }
}  // namespace

template <int64_t D, class Derived>
void DropoutNdImpl<D, Derived>::reset() {
  COHORT_CHECK(options.p() >= 0 && options.p() <= 1, layer_name(D), ": probability has to be between 0 and 1, but got ",
               options.p());
}

template <int64_t D, class Derived>
Tensor DropoutNdImpl<D, Derived>::forward(const Tensor& x) {
  const bool training = this->is_training();
  Tensor out = D == 1 ? functional::dropout1d(x, options.p(), training)
               : D == 2 ? functional::dropout2d(x, options.p(), training)
                        : functional::dropout3d(x, options.p(), training);
  if (options.inplace() && !out.is_same(x)) {
    x.copy_(out);
    return x;
  }
  return out;
}

template <int64_t D, class Derived>
void DropoutNdImpl<D, Derived>::pretty_print(std::ostream& os) const {
  os << layer_name(D) << "(p=" << options.p() << ", inplace=" << (options.inplace() ? "True" : "False") << ")";
}

template class DropoutNdImpl<1, Dropout1dImpl>;
template class DropoutNdImpl<2, Dropout2dImpl>;
template class DropoutNdImpl<3, Dropout3dImpl>;

}  // namespace cohort::nn
