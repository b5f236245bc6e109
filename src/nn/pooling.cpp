// The pooling layers: option checks at construction and PyTorch's reprs.
#include "cohort/nn/pooling.h"

#include <ostream>

namespace cohort::nn {

namespace {

// PyTorch prints the argument as given; an int (equal entries) is the common spelling.
struct Compact {
  const ExpandingArray<2>& a;
};
std::ostream& operator<<(std::ostream& os, Compact c) {
  if (c.a[0] == c.a[1]) return os << c.a[0];
  return os << c.a;
}

void check_positive(const char* name, const char* what, const ExpandingArray<2>& a) {
  for (int64_t v : a) COHORT_CHECK(v > 0, name, ": ", what, " must be positive, got ", what, "=", a);
}

void print_output_size(std::ostream& os, const functional::AdaptivePool2dFuncOptions& o) {
  const auto& s = o.output_size();
  if (s[0] && s[1] && *s[0] == *s[1]) {
    os << "output_size=" << *s[0];
    return;
  }
  os << "output_size=(";
  for (int d = 0; d < 2; ++d) {
    os << (d ? ", " : "");
    if (s[d]) os << *s[d]; else os << "None";
  }
  os << ")";
}

}  // namespace

void MaxPool2dImpl::reset() {
  check_positive("MaxPool2d", "kernel_size", options.kernel_size());
  check_positive("MaxPool2d", "stride", options.stride());
  check_positive("MaxPool2d", "dilation", options.dilation());
}
Tensor MaxPool2dImpl::forward(const Tensor& input) { return functional::max_pool2d(input, options); }
std::tuple<Tensor, Tensor> MaxPool2dImpl::forward_with_indices(const Tensor& input) {
  return functional::max_pool2d_with_indices(input, options);
}
void MaxPool2dImpl::pretty_print(std::ostream& os) const {
  os << "MaxPool2d(kernel_size=" << Compact{options.kernel_size()} << ", stride=" << Compact{options.stride()}
     << ", padding=" << Compact{options.padding()} << ", dilation=" << Compact{options.dilation()}
     << ", ceil_mode=" << (options.ceil_mode() ? "True" : "False") << ")";
}

void AvgPool2dImpl::reset() {
  check_positive("AvgPool2d", "kernel_size", options.kernel_size());
  check_positive("AvgPool2d", "stride", options.stride());
}
Tensor AvgPool2dImpl::forward(const Tensor& input) { return functional::avg_pool2d(input, options); }
// PyTorch's AvgPool2d shows neither ceil_mode nor count_include_pad.
void AvgPool2dImpl::pretty_print(std::ostream& os) const {
  os << "AvgPool2d(kernel_size=" << Compact{options.kernel_size()} << ", stride=" << Compact{options.stride()}
     << ", padding=" << Compact{options.padding()} << ")";
}

Tensor AdaptiveAvgPool2dImpl::forward(const Tensor& input) { return functional::adaptive_avg_pool2d(input, options); }
void AdaptiveAvgPool2dImpl::pretty_print(std::ostream& os) const {
  os << "AdaptiveAvgPool2d(";
  print_output_size(os, options);
  os << ")";
}

Tensor AdaptiveMaxPool2dImpl::forward(const Tensor& input) { return functional::adaptive_max_pool2d(input, options); }
std::tuple<Tensor, Tensor> AdaptiveMaxPool2dImpl::forward_with_indices(const Tensor& input) {
  return functional::adaptive_max_pool2d_with_indices(input, options);
}
void AdaptiveMaxPool2dImpl::pretty_print(std::ostream& os) const {
  os << "AdaptiveMaxPool2d(";
  print_output_size(os, options);
  os << ")";
}

}  // namespace cohort::nn
