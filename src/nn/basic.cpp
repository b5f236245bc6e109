// Identity, Flatten, Unflatten and Dropout.
#include "cohort/nn/basic.h"

#include <ostream>

#include "python_repr.h"

namespace cohort::nn {

void IdentityImpl::pretty_print(std::ostream& os) const { os << "Identity()"; }

void FlattenImpl::pretty_print(std::ostream& os) const {
  os << "Flatten(start_dim=" << options.start_dim() << ", end_dim=" << options.end_dim() << ")";
}

void UnflattenImpl::pretty_print(std::ostream& os) const {
  os << "Unflatten(dim=" << options.dim() << ", unflattened_size=" << detail::python_tuple(options.sizes()) << ")";
}

DropoutImpl::DropoutImpl(const DropoutOptions& options_) : options(options_) { reset(); }

void DropoutImpl::reset() {
  COHORT_CHECK(options.p() >= 0 && options.p() <= 1, "Dropout: probability has to be between 0 and 1, but got ", options.p());
}

Tensor DropoutImpl::forward(const Tensor& x) {
  Tensor out = functional::dropout(x, options.p(), is_training());
  if (options.inplace() && !out.is_same(x)) {
    x.copy_(out);
    return x;
  }
  return out;
}

void DropoutImpl::pretty_print(std::ostream& os) const {
  os << "Dropout(p=" << options.p() << ", inplace=" << (options.inplace() ? "True" : "False") << ")";
}

FunctionalImpl::FunctionalImpl(Function function) : function_(std::move(function)) {
  COHORT_CHECK(function_ != nullptr, "Functional: expected a function, got an empty std::function");
}

Tensor FunctionalImpl::forward(const Tensor& input) { return function_(input); }

void FunctionalImpl::pretty_print(std::ostream& os) const { os << "Functional()"; }

}  // namespace cohort::nn
