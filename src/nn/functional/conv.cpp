// conv1d and conv2d with libtorch's functional options: the padding mode or sizes, then the ops of
// cohort/ops/convolution.h.
#include "cohort/nn/functional/conv.h"

#include "cohort/ops/convolution.h"

namespace cohort::nn::functional {

namespace {

template <size_t D, class Conv>
Tensor conv_with(Conv conv, const Tensor& input, const Tensor& weight, const Tensor& bias,
                 const ConvFuncOptions<D>& o) {
  const auto& padding = o.padding();
  if (const auto* sizes = std::get_if<ExpandingArray<D>>(&padding))
    return conv(input, weight, bias, o.stride(), IntArrayRef(*sizes), o.dilation(), o.groups());
  const char* mode = std::holds_alternative<SamePadding>(padding) ? "same" : "valid";
  return conv(input, weight, bias, o.stride(), std::string_view(mode), o.dilation(), o.groups());
}

// The overload sets of cohort::conv1d/conv2d as callables (the padding picks the overload).
struct Conv1d {
  template <class... A>
  Tensor operator()(A&&... a) const { return cohort::conv1d(std::forward<A>(a)...); }
};
struct Conv2d {
  template <class... A>
  Tensor operator()(A&&... a) const { return cohort::conv2d(std::forward<A>(a)...); }
};

}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& weight, const Conv1dFuncOptions& options) {
  return conv_with<1>(Conv1d{}, input, weight, options.bias(), options);
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const Conv2dFuncOptions& options) {
  return conv_with<2>(Conv2d{}, input, weight, options.bias(), options);
}
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv1dFuncOptions& options) {
  return conv_with<1>(Conv1d{}, input, weight, bias, options);
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv2dFuncOptions& options) {
  return conv_with<2>(Conv2d{}, input, weight, bias, options);
}

}  // namespace cohort::nn::functional
