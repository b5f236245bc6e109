// The argument checks that conv1d/2d (convolution.cpp) and conv3d (convolution3d.cpp) share, and
// the padding modes.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "cohort/core/expanding_array.h"
#include "cohort/core/tensor.h"
#include "ops/internal.h"

namespace cohort::detail::conv {

inline const char* dims_letters(size_t D) { return D == 1 ? "[N, C, L]" : D == 2 ? "[N, C, H, W]" : "[N, C, D, H, W]"; }
inline const char* kernel_letters(size_t D) { return D == 1 ? "k" : D == 2 ? "kH, kW" : "kD, kH, kW"; }

// The checks every convolution makes: ranks, dtypes, devices. weight_letters names weight's first
// two dims.
template <size_t D>
void check_tensors(const char* op, const Tensor& input, const Tensor& weight, const Tensor& bias,
                   const char* weight_letters) {
  detail::check_defined(op, input, "input");
  detail::check_defined(op, weight, "weight");
  constexpr int64_t kDim = static_cast<int64_t>(D);
  COHORT_CHECK(input.dim() == kDim + 1 || input.dim() == kDim + 2, op, ": expected a ", kDim + 1, "-d (unbatched) or ",
               kDim + 2, "-d (batched) input ", dims_letters(D), ", got input of shape ", input.sizes());
  COHORT_CHECK(weight.dim() == kDim + 2, op, ": expected a ", kDim + 2, "-d weight [", weight_letters, ", ",
               kernel_letters(D), "], got weight of shape ", weight.sizes());
  COHORT_CHECK_AS(TypeError, input.dtype() == weight.dtype(), op, ": expected input and weight to have the same dtype, got ",
                  input.dtype(), " and ", weight.dtype(), "; hint: convert one with .to(", weight.dtype(), ")");
  COHORT_CHECK_AS(TypeError, !bias.defined() || bias.dtype() == input.dtype(), op,
                  ": expected bias to have the dtype of input and weight, got ", bias.dtype(), " and ", input.dtype());
  COHORT_CHECK_AS(TypeError, input.dtype() != kBool, op, ": bool tensors are not supported");
  detail::check_same_device(op, input, weight);
  if (bias.defined()) detail::check_same_device(op, input, bias);
}

template <size_t D>
void check_geometry(const char* op, const ExpandingArray<D>& stride, const ExpandingArray<D>& dilation, int64_t groups) {
  COHORT_CHECK(groups > 0, op, ": groups must be positive, got groups=", groups);
  for (size_t d = 0; d < D; ++d) {
    COHORT_CHECK(stride[d] > 0, op, ": stride must be positive, got stride=", stride);
    COHORT_CHECK(dilation[d] > 0, op, ": dilation must be positive, got dilation=", dilation);
  }
}

enum class PaddingMode { Explicit, Same, Valid };

inline PaddingMode padding_mode(const char* op, std::string_view padding) {
  if (padding == "same") return PaddingMode::Same;
  if (padding == "valid") return PaddingMode::Valid;
  throw Error(detail::str(op, ": expected padding \"same\" or \"valid\", got \"", std::string(padding),
                          "\"; hint: give the padding as numbers otherwise"));
}

// conv3d on checked arguments, composed of one conv2d (convolution3d.cpp): x [N, C, D, H, W],
// w [O, C / groups, kD, kH, kW]; lo and hi are the padding before and after in each dim.
Tensor conv3d_as_conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, const ExpandingArray<3>& stride,
                        const std::array<int64_t, 3>& lo, const std::array<int64_t, 3>& hi,
                        const ExpandingArray<3>& dilation, int64_t groups);
// conv_transpose3d on checked arguments, composed of one conv_transpose2d: x [N, C, D, H, W],
// w [C, O / groups, kD, kH, kW] -> out_sizes [N, O, D', H', W'].
Tensor conv_transpose3d_as_conv_transpose2d(const Tensor& x, const Tensor& w, const Tensor& bias,
                                            const ExpandingArray<3>& stride, const ExpandingArray<3>& padding,
                                            const ExpandingArray<3>& output_padding,
                                            const ExpandingArray<3>& dilation, int64_t groups, const Shape& out_sizes);

}  // namespace cohort::detail::conv
