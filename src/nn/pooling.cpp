// The pooling layers: option checks at construction and PyTorch's reprs.
#include "cohort/nn/pooling.h"

#include <ostream>

namespace cohort::nn {

namespace {

// PyTorch prints the argument as given; an int (equal entries) is the common spelling.
template <size_t D>
struct Compact {
  const ExpandingArray<D>& a;
};
template <size_t D>
Compact(const ExpandingArray<D>&) -> Compact<D>;
template <size_t D>
std::ostream& operator<<(std::ostream& os, Compact<D> c) {
  if (c.a.all_equal(c.a[0])) return os << c.a[0];
  return os << c.a;
}

template <size_t D>
void check_positive(const char* name, const char* what, const ExpandingArray<D>& a) {
  for (int64_t v : a) COHORT_CHECK(v > 0, name, ": ", what, " must be positive, got ", what, "=", a);
}

void print_output_size(std::ostream& os, const functional::AdaptivePool1dFuncOptions& o) {
  os << "output_size=" << o.output_size()[0];
}

void print_output_size(std::ostream& os, const functional::AdaptivePool3dFuncOptions& o) {
  const auto& s = o.output_size();
  if (s[0] && s[1] && s[2] && *s[0] == *s[1] && *s[1] == *s[2]) {
    os << "output_size=" << *s[0];
    return;
  }
  os << "output_size=(";
  for (int d = 0; d < 3; ++d) {
    os << (d ? ", " : "");
    if (s[d]) os << *s[d]; else os << "None";
  }
  os << ")";
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

// ---- 1- and 3-d ----------------------------------------------------------------------------------

namespace {

Tensor max_pool(const Tensor& x, const MaxPoolOptions<1>& o) { return functional::max_pool1d(x, o); }
Tensor max_pool(const Tensor& x, const MaxPoolOptions<3>& o) { return functional::max_pool3d(x, o); }
std::tuple<Tensor, Tensor> max_pool_with_indices(const Tensor& x, const MaxPoolOptions<1>& o) {
  return functional::max_pool1d_with_indices(x, o);
}
std::tuple<Tensor, Tensor> max_pool_with_indices(const Tensor& x, const MaxPoolOptions<3>& o) {
  return functional::max_pool3d_with_indices(x, o);
}
Tensor avg_pool(const Tensor& x, const AvgPoolOptions<1>& o) { return functional::avg_pool1d(x, o); }
Tensor avg_pool(const Tensor& x, const AvgPoolOptions<3>& o) { return functional::avg_pool3d(x, o); }
Tensor adaptive_avg_pool(const Tensor& x, const AdaptiveAvgPool1dOptions& o) {
  return functional::adaptive_avg_pool1d(x, o);
}
Tensor adaptive_avg_pool(const Tensor& x, const AdaptiveAvgPool3dOptions& o) {
  return functional::adaptive_avg_pool3d(x, o);
}
std::tuple<Tensor, Tensor> adaptive_max_pool(const Tensor& x, const AdaptiveMaxPool1dOptions& o) {
  return functional::adaptive_max_pool1d_with_indices(x, o);
}
std::tuple<Tensor, Tensor> adaptive_max_pool(const Tensor& x, const AdaptiveMaxPool3dOptions& o) {
  return functional::adaptive_max_pool3d_with_indices(x, o);
}

// The layer's name for messages and reprs (Module::name() is not yet the derived type's while
// reset() runs in the base's constructor).
template <class Layer> const char* layer_name();
template <> const char* layer_name<MaxPool1dImpl>() { return "MaxPool1d"; }
template <> const char* layer_name<MaxPool3dImpl>() { return "MaxPool3d"; }
template <> const char* layer_name<AvgPool1dImpl>() { return "AvgPool1d"; }
template <> const char* layer_name<AvgPool3dImpl>() { return "AvgPool3d"; }
template <> const char* layer_name<AdaptiveAvgPool1dImpl>() { return "AdaptiveAvgPool1d"; }
template <> const char* layer_name<AdaptiveAvgPool3dImpl>() { return "AdaptiveAvgPool3d"; }
template <> const char* layer_name<AdaptiveMaxPool1dImpl>() { return "AdaptiveMaxPool1d"; }
template <> const char* layer_name<AdaptiveMaxPool3dImpl>() { return "AdaptiveMaxPool3d"; }

}  // namespace

template <size_t D, class Derived>
void MaxPoolImpl<D, Derived>::reset() {
  check_positive(layer_name<Derived>(), "kernel_size", options.kernel_size());
  check_positive(layer_name<Derived>(), "stride", options.stride());
  check_positive(layer_name<Derived>(), "dilation", options.dilation());
}
template <size_t D, class Derived>
Tensor MaxPoolImpl<D, Derived>::forward(const Tensor& input) { return max_pool(input, options); }
template <size_t D, class Derived>
std::tuple<Tensor, Tensor> MaxPoolImpl<D, Derived>::forward_with_indices(const Tensor& input) {
  return max_pool_with_indices(input, options);
}
template <size_t D, class Derived>
void MaxPoolImpl<D, Derived>::pretty_print(std::ostream& os) const {
  os << layer_name<Derived>() << "(kernel_size=" << Compact{options.kernel_size()}
     << ", stride=" << Compact{options.stride()} << ", padding=" << Compact{options.padding()}
     << ", dilation=" << Compact{options.dilation()}
     << ", ceil_mode=" << (options.ceil_mode() ? "True" : "False") << ")";
}

template <size_t D, class Derived>
void AvgPoolImpl<D, Derived>::reset() {
  check_positive(layer_name<Derived>(), "kernel_size", options.kernel_size());
  check_positive(layer_name<Derived>(), "stride", options.stride());
}
template <size_t D, class Derived>
Tensor AvgPoolImpl<D, Derived>::forward(const Tensor& input) { return avg_pool(input, options); }
// PyTorch's AvgPool1d keeps its sizes as 1-tuples, AvgPool3d as given (an int when equal).
template <size_t D, class Derived>
void AvgPoolImpl<D, Derived>::pretty_print(std::ostream& os) const {
  if constexpr (D == 1) {
    os << layer_name<Derived>() << "(kernel_size=" << options.kernel_size() << ", stride=" << options.stride()
       << ", padding=" << options.padding() << ")";
  } else {
    os << layer_name<Derived>() << "(kernel_size=" << Compact{options.kernel_size()}
       << ", stride=" << Compact{options.stride()} << ", padding=" << Compact{options.padding()} << ")";
  }
}

template <class Options, class Derived>
Tensor AdaptiveAvgPoolImpl<Options, Derived>::forward(const Tensor& input) { return adaptive_avg_pool(input, options); }
template <class Options, class Derived>
void AdaptiveAvgPoolImpl<Options, Derived>::pretty_print(std::ostream& os) const {
  os << layer_name<Derived>() << "(";
  print_output_size(os, options);
  os << ")";
}

template <class Options, class Derived>
Tensor AdaptiveMaxPoolImpl<Options, Derived>::forward(const Tensor& input) {
  return std::get<0>(adaptive_max_pool(input, options));
}
template <class Options, class Derived>
std::tuple<Tensor, Tensor> AdaptiveMaxPoolImpl<Options, Derived>::forward_with_indices(const Tensor& input) {
  return adaptive_max_pool(input, options);
}
template <class Options, class Derived>
void AdaptiveMaxPoolImpl<Options, Derived>::pretty_print(std::ostream& os) const {
  os << layer_name<Derived>() << "(";
  print_output_size(os, options);
  os << ")";
}

template class MaxPoolImpl<1, MaxPool1dImpl>;
template class MaxPoolImpl<3, MaxPool3dImpl>;
template class AvgPoolImpl<1, AvgPool1dImpl>;
template class AvgPoolImpl<3, AvgPool3dImpl>;
template class AdaptiveAvgPoolImpl<AdaptiveAvgPool1dOptions, AdaptiveAvgPool1dImpl>;
template class AdaptiveAvgPoolImpl<AdaptiveAvgPool3dOptions, AdaptiveAvgPool3dImpl>;
template class AdaptiveMaxPoolImpl<AdaptiveMaxPool1dOptions, AdaptiveMaxPool1dImpl>;
template class AdaptiveMaxPoolImpl<AdaptiveMaxPool3dOptions, AdaptiveMaxPool3dImpl>;

}  // namespace cohort::nn
