// The Conv1d/2d/3d and ConvTranspose1d/2d/3d layers: parameters, PyTorch's
// initialisation and repr, and the transposed layers' output_size.
#include "cohort/nn/conv.h"

#include <cmath>
#include <ostream>
#include <vector>

#include "cohort/nn/init.h"
#include "cohort/ops/creation.h"

namespace cohort::nn {

namespace {

// The checks a convolution's and a transposed convolution's options share.
template <size_t D, class Options>
void check_conv_options(const char* name, const Options& options) {
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
}

}  // namespace

template <size_t D, class Derived>
void ConvNdImpl<D, Derived>::reset() {
  const char* name = D == 1 ? "Conv1d" : D == 2 ? "Conv2d" : "Conv3d";
  const int64_t in = options.in_channels(), out = options.out_channels(), groups = options.groups();
  check_conv_options<D>(name, options);
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

namespace {

// PyTorch's _ConvNd.reset_parameters, for both kinds (fan_in is weight.size(1) * kernel either way).
void init_conv_parameters(const Tensor& weight, const Tensor& bias) {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    const int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).first;
    const double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0;
    init::uniform_(bias, -bound, bound);
  }
}

}  // namespace

template <size_t D, class Derived>
void ConvNdImpl<D, Derived>::reset_parameters() {
  init_conv_parameters(weight, bias);
}

// PyTorch's rule: stride always; padding unless all zeros; dilation unless all ones; groups unless
// 1; bias only when absent.
template <size_t D, class Derived>
void ConvNdImpl<D, Derived>::pretty_print(std::ostream& os) const {
  os << (D == 1 ? "Conv1d(" : D == 2 ? "Conv2d(" : "Conv3d(") << options.in_channels() << ", " << options.out_channels()
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
template class ConvNdImpl<3, Conv3dImpl>;

template <size_t D, class Derived>
void ConvTransposeNdImpl<D, Derived>::reset() {
  const char* name = D == 1 ? "ConvTranspose1d" : D == 2 ? "ConvTranspose2d" : "ConvTranspose3d";
  const int64_t in = options.in_channels(), out = options.out_channels(), groups = options.groups();
  check_conv_options<D>(name, options);
  for (size_t d = 0; d < D; ++d) {
    COHORT_CHECK(options.padding()[d] >= 0, name, ": padding must be non-negative, got padding=", options.padding());
    const int64_t op = options.output_padding()[d];
    COHORT_CHECK(op >= 0 && (op < options.stride()[d] || op < options.dilation()[d]), name,
                 ": output_padding must be non-negative and smaller than either stride or dilation, got "
                 "output_padding=", options.output_padding(), ", stride=", options.stride(), ", dilation=",
                 options.dilation());
  }

  Shape weight_sizes{in, out / groups};
  for (int64_t k : options.kernel_size()) weight_sizes.push_back(k);
  weight = this->register_parameter("weight", cohort::empty(weight_sizes));
  bias = this->register_parameter("bias", options.bias() ? cohort::empty({out}) : Tensor(), options.bias());
  reset_parameters();
}

template <size_t D, class Derived>
void ConvTransposeNdImpl<D, Derived>::reset_parameters() {
  init_conv_parameters(weight, bias);
}

// As Conv's, with output_padding after dilation (PyTorch's order).
template <size_t D, class Derived>
void ConvTransposeNdImpl<D, Derived>::pretty_print(std::ostream& os) const {
  os << (D == 1 ? "ConvTranspose1d(" : D == 2 ? "ConvTranspose2d(" : "ConvTranspose3d(") << options.in_channels() << ", " << options.out_channels()
     << ", kernel_size=" << options.kernel_size() << ", stride=" << options.stride();
  if (!options.padding().all_equal(0)) os << ", padding=" << options.padding();
  if (!options.dilation().all_equal(1)) os << ", dilation=" << options.dilation();
  if (!options.output_padding().all_equal(0)) os << ", output_padding=" << options.output_padding();
  if (options.groups() != 1) os << ", groups=" << options.groups();
  if (!options.bias()) os << ", bias=False";
  os << ")";
}

// PyTorch's _ConvTransposeNd._output_padding: output_size (D sizes, or the whole shape) must lie
// between the smallest output the geometry gives and that plus stride - 1; the difference is the
// output_padding.
template <size_t D, class Derived>
Tensor ConvTransposeNdImpl<D, Derived>::forward(const Tensor& input, const std::optional<IntArrayRef>& output_size) {
  const char* name = D == 1 ? "ConvTranspose1d" : D == 2 ? "ConvTranspose2d" : "ConvTranspose3d";
  ExpandingArray<D> output_padding = options.output_padding();
  if (output_size) {
    const int64_t spatial = static_cast<int64_t>(D);
    COHORT_CHECK(input.dim() == spatial + 1 || input.dim() == spatial + 2, name, ": expected a ", spatial + 1,
                 "-d (unbatched) or ", spatial + 2, "-d (batched) input, got input of shape ", input.sizes());
    std::vector<int64_t> sizes = output_size->vec();
    const size_t leading = static_cast<size_t>(input.dim()) - D;
    if (sizes.size() == D + leading) sizes.erase(sizes.begin(), sizes.begin() + static_cast<std::ptrdiff_t>(leading));
    COHORT_CHECK(sizes.size() == D, name, ": output_size must have ", D, " or ", D + leading,
                 " elements for an input of shape ", input.sizes(), ", got output_size=", *output_size);
    std::vector<int64_t> lowest, highest;
    for (size_t d = 0; d < D; ++d) {
      const int64_t in = input.size(static_cast<int64_t>(leading + d));
      lowest.push_back((in - 1) * options.stride()[d] - 2 * options.padding()[d] +
                       options.dilation()[d] * (options.kernel_size()[d] - 1) + 1);
      highest.push_back(lowest.back() + options.stride()[d] - 1);
    }
    for (size_t d = 0; d < D; ++d)
      COHORT_CHECK(sizes[d] >= lowest[d] && sizes[d] <= highest[d], name, ": requested an output size of ", sizes,
                   ", but valid sizes range from ", lowest, " to ", highest,
                   " (for an input of shape ", input.sizes(), ")");
    for (size_t d = 0; d < D; ++d) output_padding[d] = sizes[d] - lowest[d];
  }
  auto o = functional::ConvTransposeFuncOptions<D>()
               .bias(bias)
               .stride(options.stride())
               .padding(options.padding())
               .output_padding(output_padding)
               .groups(options.groups())
               .dilation(options.dilation());
  if constexpr (D == 1)
    return functional::conv_transpose1d(input, weight, o);
  else if constexpr (D == 2)
    return functional::conv_transpose2d(input, weight, o);
  else
    return functional::conv_transpose3d(input, weight, o);
}

template class ConvTransposeNdImpl<1, ConvTranspose1dImpl>;
template class ConvTransposeNdImpl<2, ConvTranspose2dImpl>;
template class ConvTransposeNdImpl<3, ConvTranspose3dImpl>;

ConvTranspose1dImpl::ConvTranspose1dImpl(const ConvTranspose1dOptions& options_) : ConvTransposeNdImpl(options_) {
  reset();
}
ConvTranspose2dImpl::ConvTranspose2dImpl(const ConvTranspose2dOptions& options_) : ConvTransposeNdImpl(options_) {
  reset();
}
ConvTranspose3dImpl::ConvTranspose3dImpl(const ConvTranspose3dOptions& options_) : ConvTransposeNdImpl(options_) {
  reset();
}

Conv1dImpl::Conv1dImpl(const Conv1dOptions& options_) : ConvNdImpl(options_) { reset(); }
Tensor Conv1dImpl::forward(const Tensor& input) { return functional::conv1d(input, weight, func_options()); }

Conv2dImpl::Conv2dImpl(const Conv2dOptions& options_) : ConvNdImpl(options_) { reset(); }
Tensor Conv2dImpl::forward(const Tensor& input) { return functional::conv2d(input, weight, func_options()); }

Conv3dImpl::Conv3dImpl(const Conv3dOptions& options_) : ConvNdImpl(options_) { reset(); }
Tensor Conv3dImpl::forward(const Tensor& input) { return functional::conv3d(input, weight, func_options()); }

}  // namespace cohort::nn
