// conv1d, conv2d, conv3d and their transposes with libtorch's functional options: the padding mode or
// sizes, then the ops of cohort/ops/convolution.h.
#include "cohort/nn/functional/conv.h"

#include "cohort/ops/convolution.h"

namespace cohort::nn::functional {

namespace {

// cohort::conv1d, conv2d or conv3d with the options' stride, dilation and groups; `padding` is sizes or a mode.
template <size_t D, class Padding>
Tensor conv(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvFuncOptions<D>& o,
            Padding padding) {
  if constexpr (D == 1)
    return cohort::conv1d(input, weight, bias, o.stride(), padding, o.dilation(), o.groups());
  else if constexpr (D == 2)
    return cohort::conv2d(input, weight, bias, o.stride(), padding, o.dilation(), o.groups());
  else
    return cohort::conv3d(input, weight, bias, o.stride(), padding, o.dilation(), o.groups());
}

template <size_t D>
Tensor conv_with(const Tensor& input, const Tensor& weight, const Tensor& bias, const ConvFuncOptions<D>& o) {
  const auto& padding = o.padding();
  if (const auto* sizes = std::get_if<ExpandingArray<D>>(&padding))
    return conv(input, weight, bias, o, IntArrayRef(*sizes));
  const std::string_view mode = std::holds_alternative<SamePadding>(padding) ? "same" : "valid";
  return conv(input, weight, bias, o, mode);
}

}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& weight, const Conv1dFuncOptions& options) {
  return conv_with<1>(input, weight, options.bias(), options);
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const Conv2dFuncOptions& options) {
  return conv_with<2>(input, weight, options.bias(), options);
}
Tensor conv3d(const Tensor& input, const Tensor& weight, const Conv3dFuncOptions& options) {
  return conv_with<3>(input, weight, options.bias(), options);
}
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv3dFuncOptions& options) {
  return conv_with<3>(input, weight, bias, options);
}
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv1dFuncOptions& options) {
  return conv_with<1>(input, weight, bias, options);
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv2dFuncOptions& options) {
  return conv_with<2>(input, weight, bias, options);
}

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const ConvTranspose1dFuncOptions& o) {
  return cohort::conv_transpose1d(input, weight, o.bias(), o.stride(), o.padding(), o.output_padding(), o.groups(),
                                  o.dilation());
}
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const ConvTranspose2dFuncOptions& o) {
  return cohort::conv_transpose2d(input, weight, o.bias(), o.stride(), o.padding(), o.output_padding(), o.groups(),
                                  o.dilation());
}

Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const ConvTranspose3dFuncOptions& o) {
  return cohort::conv_transpose3d(input, weight, o.bias(), o.stride(), o.padding(), o.output_padding(), o.groups(),
                                  o.dilation());
}

}  // namespace cohort::nn::functional
