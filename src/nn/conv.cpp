// The Conv1d and Conv2d layers: parameters, PyTorch's initialisation and repr.
#include "cohort/nn/conv.h"

#include <cmath>
#include <ostream>

#include "cohort/nn/init.h"
#include "cohort/ops/creation.h"

namespace cohort::nn {

template <size_t D, class Derived>
void ConvNdImpl<D, Derived>::reset() {
  const char* name = D == 1 ? "Conv1d" : "Conv2d";
  const int64_t in = options.in_channels(), out = options.out_channels(), groups = options.groups();
  COHORT_CHECK(in > 0 && out > 0, name, ": channel counts must be positive, got in_channels=", in,
               " out_channels=", out);
  COHORT_CHECK(groups > 0, name, ": groups must be positive, got groups=", groups);
  COHORT_CHECK(in % groups == 0, name, ": in_channels=", in, " must be divisible by groups=", groups);
  COHORT_CHECK(out % groups == 0, name, ": out_channels=", out, " must be divisible by groups=", groups);
  for (size_t d = 0; d < D; ++d) {
    COHORT_CHECK(options.kernel_size()[d] > 0, name, ": kernel_size must be positive, got kernel_size=",
                 options.kernel_size());
    COHORT_CHECK(options.stride()[d] > 0, name, ": stride must be positive, got stride=", options.stride());
    COHORT_CHECK(options.dilation()[d] > 0, name, ": dilation must be positive, got dilation=", options.dilation());
  }
  if (std::holds_alternative<SamePadding>(options.padding()))
    COHORT_CHECK(options.stride().all_equal(1), name, ": padding=same needs stride 1, got stride=", options.stride(),
                 " (PyTorch refuses strided 'same' convolutions too); hint: give the padding as numbers");
  if (const auto* p = std::get_if<ExpandingArray<D>>(&options.padding()))
    for (int64_t v : *p) COHORT_CHECK(v >= 0, name, ": padding must be non-negative, got padding=", *p);

  Shape weight_sizes{out, in / groups};
  for (int64_t k : options.kernel_size()) weight_sizes.push_back(k);
  weight = this->register_parameter("weight", cohort::empty(weight_sizes));
  bias = this->register_parameter("bias", options.bias() ? cohort::empty({out}) : Tensor(), options.bias());
  reset_parameters();
}

template <size_t D, class Derived>
void ConvNdImpl<D, Derived>::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).first;
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0;
    init::uniform_(bias, -bound, bound);
  }
}

// PyTorch's rule: stride always; padding unless all zeros; dilation unless all ones; groups unless
// 1; bias only when absent.
template <size_t D, class Derived>
void ConvNdImpl<D, Derived>::pretty_print(std::ostream& os) const {
  os << (D == 1 ? "Conv1d(" : "Conv2d(") << options.in_channels() << ", " << options.out_channels()
     << ", kernel_size=" << options.kernel_size() << ", stride=" << options.stride();
  const auto* sizes = std::get_if<ExpandingArray<D>>(&options.padding());
  if (!sizes || !sizes->all_equal(0)) os << ", padding=" << options.padding();
  if (!options.dilation().all_equal(1)) os << ", dilation=" << options.dilation();
  if (options.groups() != 1) os << ", groups=" << options.groups();
  if (!options.bias()) os << ", bias=False";
  os << ")";
}

template <size_t D, class Derived>
functional::ConvFuncOptions<D> ConvNdImpl<D, Derived>::func_options() const {
  return functional::ConvFuncOptions<D>()
      .bias(bias)
      .stride(options.stride())
      .padding(options.padding())
      .dilation(options.dilation())
      .groups(options.groups());
}

template class ConvNdImpl<1, Conv1dImpl>;
template class ConvNdImpl<2, Conv2dImpl>;

Conv1dImpl::Conv1dImpl(const Conv1dOptions& options_) : ConvNdImpl(options_) { reset(); }
Tensor Conv1dImpl::forward(const Tensor& input) { return functional::conv1d(input, weight, func_options()); }

Conv2dImpl::Conv2dImpl(const Conv2dOptions& options_) : ConvNdImpl(options_) { reset(); }
Tensor Conv2dImpl::forward(const Tensor& input) { return functional::conv2d(input, weight, func_options()); }

}  // namespace cohort::nn
