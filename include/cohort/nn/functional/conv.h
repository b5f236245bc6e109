// Convolution (nn::functional, spelled as libtorch's torch::nn::functional):
//   F::conv2d(x, w, F::Conv2dFuncOptions().bias(b).stride(1).padding(1).groups(2))
//   F::conv2d(x, w, b, F::Conv2dFuncOptions().padding(kSame))
//   F::conv_transpose2d(x, w, F::ConvTranspose2dFuncOptions().stride(2).padding(1).output_padding(1))
//   F::conv3d(v, w, F::Conv3dFuncOptions().stride({1, 2, 2}))   // v [N, C, D, H, W]
// The options resolve to cohort::conv1d / conv2d / conv3d / conv_transpose1d / 2d / 3d
// (cohort/ops/convolution.h), whose header
// gives the shapes, the padding rules, the gradients and the errors.
#pragma once

#include <type_traits>
#include <variant>

#include "cohort/core/tensor.h"
#include "cohort/core/expanding_array.h"

namespace cohort {

// Padding modes (libtorch's torch::kSame and torch::kValid).
struct SamePadding {};
struct ValidPadding {};
inline constexpr SamePadding kSame{};
inline constexpr ValidPadding kValid{};

// Prints a padding PyTorch's way: "(1, 1)", "same", "valid".
template <size_t D>
std::ostream& operator<<(std::ostream& os, const std::variant<ExpandingArray<D>, ValidPadding, SamePadding>& p) {
  if (std::holds_alternative<SamePadding>(p)) return os << "same";
  if (std::holds_alternative<ValidPadding>(p)) return os << "valid";
  return os << std::get<ExpandingArray<D>>(p);
}

namespace nn {

// Explicit sizes, or one of the two modes.
template <size_t D>
using ConvPadding = std::variant<ExpandingArray<D>, ValidPadding, SamePadding>;

namespace functional {

template <size_t D>
struct ConvFuncOptions {
  ConvFuncOptions& bias(const Tensor& b) { bias_ = b; return *this; }
  ConvFuncOptions& stride(ExpandingArray<D> s) { stride_ = s; return *this; }
  ConvFuncOptions& padding(ExpandingArray<D> p) { padding_ = p; return *this; }
  ConvFuncOptions& padding(SamePadding p) { padding_ = p; return *this; }
  ConvFuncOptions& padding(ValidPadding p) { padding_ = p; return *this; }
  template <class P, std::enable_if_t<std::is_same_v<P, ConvPadding<D>>, int> = 0>
  ConvFuncOptions& padding(const P& p) { padding_ = p; return *this; }  // the stored variant, as padding() returns it
  ConvFuncOptions& dilation(ExpandingArray<D> d) { dilation_ = d; return *this; }
  ConvFuncOptions& groups(int64_t g) { groups_ = g; return *this; }

  const Tensor& bias() const { return bias_; }
  const ExpandingArray<D>& stride() const { return stride_; }
  const ConvPadding<D>& padding() const { return padding_; }
  const ExpandingArray<D>& dilation() const { return dilation_; }
  int64_t groups() const { return groups_; }

 private:
  Tensor bias_;
  ExpandingArray<D> stride_ = 1;
  ConvPadding<D> padding_ = ExpandingArray<D>(0);
  ExpandingArray<D> dilation_ = 1;
  int64_t groups_ = 1;
};

using Conv1dFuncOptions = ConvFuncOptions<1>;
using Conv2dFuncOptions = ConvFuncOptions<2>;
using Conv3dFuncOptions = ConvFuncOptions<3>;

Tensor conv1d(const Tensor& input, const Tensor& weight, const Conv1dFuncOptions& options = {});
Tensor conv2d(const Tensor& input, const Tensor& weight, const Conv2dFuncOptions& options = {});
Tensor conv3d(const Tensor& input, const Tensor& weight, const Conv3dFuncOptions& options = {});
// The same with the bias given apart (it replaces options.bias()).
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv1dFuncOptions& options = {});
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv2dFuncOptions& options = {});
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, const Conv3dFuncOptions& options = {});

template <size_t D>
struct ConvTransposeFuncOptions {
  ConvTransposeFuncOptions& bias(const Tensor& b) { bias_ = b; return *this; }
  ConvTransposeFuncOptions& stride(ExpandingArray<D> s) { stride_ = s; return *this; }
  ConvTransposeFuncOptions& padding(ExpandingArray<D> p) { padding_ = p; return *this; }
  ConvTransposeFuncOptions& output_padding(ExpandingArray<D> p) { output_padding_ = p; return *this; }
  ConvTransposeFuncOptions& groups(int64_t g) { groups_ = g; return *this; }
  ConvTransposeFuncOptions& dilation(ExpandingArray<D> d) { dilation_ = d; return *this; }

  const Tensor& bias() const { return bias_; }
  const ExpandingArray<D>& stride() const { return stride_; }
  const ExpandingArray<D>& padding() const { return padding_; }
  const ExpandingArray<D>& output_padding() const { return output_padding_; }
  int64_t groups() const { return groups_; }
  const ExpandingArray<D>& dilation() const { return dilation_; }

 private:
  Tensor bias_;
  ExpandingArray<D> stride_ = 1;
  ExpandingArray<D> padding_ = 0;
  ExpandingArray<D> output_padding_ = 0;
  int64_t groups_ = 1;
  ExpandingArray<D> dilation_ = 1;
};

using ConvTranspose1dFuncOptions = ConvTransposeFuncOptions<1>;
using ConvTranspose2dFuncOptions = ConvTransposeFuncOptions<2>;
using ConvTranspose3dFuncOptions = ConvTransposeFuncOptions<3>;

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const ConvTranspose1dFuncOptions& options = {});
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const ConvTranspose2dFuncOptions& options = {});
Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const ConvTranspose3dFuncOptions& options = {});

}  // namespace functional
}  // namespace nn
}  // namespace cohort
