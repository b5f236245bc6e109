// 1-, 2- and 3-d pooling (nn::functional, spelled as libtorch's torch::nn::functional):
//   F::max_pool2d(x, F::MaxPool2dFuncOptions(2))                     // [N, C, H, W] -> [N, C, H/2, W/2]
//   F::avg_pool2d(x, F::AvgPool2dFuncOptions(3).stride(2).padding(1).count_include_pad(false))
//   F::adaptive_avg_pool2d(x, F::AdaptiveAvgPool2dFuncOptions({7, 7}))  // -> [N, C, 7, 7]
// The options resolve to the ops of cohort/ops/pooling.h, whose header gives the output sizes, the
// gradients and the errors. stride defaults to kernel_size; an adaptive pool's nullopt output size
// keeps that input dim (PyTorch's None).
#pragma once

#include <array>
#include <initializer_list>
#include <optional>
#include <tuple>

#include "cohort/core/tensor.h"
#include "cohort/core/expanding_array.h"

namespace cohort::nn {

// A max pool of D spatial dims (libtorch's MaxPoolOptions<D>); stride defaults to kernel_size.
template <size_t D>
struct MaxPoolOptions {
  MaxPoolOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  MaxPoolOptions& kernel_size(ExpandingArray<D> k) { kernel_size_ = k; return *this; }
  MaxPoolOptions& stride(ExpandingArray<D> s) { stride_ = s; return *this; }
  MaxPoolOptions& padding(ExpandingArray<D> p) { padding_ = p; return *this; }
  MaxPoolOptions& dilation(ExpandingArray<D> d) { dilation_ = d; return *this; }
  MaxPoolOptions& ceil_mode(bool c) { ceil_mode_ = c; return *this; }
  const ExpandingArray<D>& kernel_size() const { return kernel_size_; }
  const ExpandingArray<D>& stride() const { return stride_; }
  const ExpandingArray<D>& padding() const { return padding_; }
  const ExpandingArray<D>& dilation() const { return dilation_; }
  bool ceil_mode() const { return ceil_mode_; }

 private:
  ExpandingArray<D> kernel_size_, stride_;
  ExpandingArray<D> padding_ = 0;
  ExpandingArray<D> dilation_ = 1;
  bool ceil_mode_ = false;
};

// An average pool of D spatial dims (libtorch's AvgPoolOptions<D>; no divisor_override).
template <size_t D>
struct AvgPoolOptions {
  AvgPoolOptions(ExpandingArray<D> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  AvgPoolOptions& kernel_size(ExpandingArray<D> k) { kernel_size_ = k; return *this; }
  AvgPoolOptions& stride(ExpandingArray<D> s) { stride_ = s; return *this; }
  AvgPoolOptions& padding(ExpandingArray<D> p) { padding_ = p; return *this; }
  AvgPoolOptions& ceil_mode(bool c) { ceil_mode_ = c; return *this; }
  AvgPoolOptions& count_include_pad(bool c) { count_include_pad_ = c; return *this; }
  const ExpandingArray<D>& kernel_size() const { return kernel_size_; }
  const ExpandingArray<D>& stride() const { return stride_; }
  const ExpandingArray<D>& padding() const { return padding_; }
  bool ceil_mode() const { return ceil_mode_; }
  bool count_include_pad() const { return count_include_pad_; }

 private:
  ExpandingArray<D> kernel_size_, stride_;
  ExpandingArray<D> padding_ = 0;
  bool ceil_mode_ = false;
  bool count_include_pad_ = true;
};

}  // namespace cohort::nn

namespace cohort::nn::functional {

using MaxPool1dFuncOptions = MaxPoolOptions<1>;
using MaxPool2dFuncOptions = MaxPoolOptions<2>;
using MaxPool3dFuncOptions = MaxPoolOptions<3>;
using AvgPool1dFuncOptions = AvgPoolOptions<1>;
using AvgPool2dFuncOptions = AvgPoolOptions<2>;
using AvgPool3dFuncOptions = AvgPoolOptions<3>;

// An adaptive pool's output size; a nullopt entry keeps that input dim (PyTorch's None).
struct AdaptivePool2dFuncOptions {
  AdaptivePool2dFuncOptions(int64_t size) : output_size_{size, size} {}  // NOLINT
  AdaptivePool2dFuncOptions(std::optional<int64_t> h, std::optional<int64_t> w) : output_size_{h, w} {}
  AdaptivePool2dFuncOptions(std::initializer_list<int64_t> hw);  // NOLINT: exactly two sizes
  const std::array<std::optional<int64_t>, 2>& output_size() const { return output_size_; }

 private:
  std::array<std::optional<int64_t>, 2> output_size_;
};
using AdaptiveAvgPool2dFuncOptions = AdaptivePool2dFuncOptions;
using AdaptiveMaxPool2dFuncOptions = AdaptivePool2dFuncOptions;

// A 1-d adaptive pool's output size.
struct AdaptivePool1dFuncOptions {
  AdaptivePool1dFuncOptions(int64_t size) : output_size_(size) {}  // NOLINT
  AdaptivePool1dFuncOptions(ExpandingArray<1> size) : output_size_(size) {}  // NOLINT
  AdaptivePool1dFuncOptions& output_size(ExpandingArray<1> size) { output_size_ = size; return *this; }
  const ExpandingArray<1>& output_size() const { return output_size_; }

 private:
  ExpandingArray<1> output_size_;
};
using AdaptiveAvgPool1dFuncOptions = AdaptivePool1dFuncOptions;
using AdaptiveMaxPool1dFuncOptions = AdaptivePool1dFuncOptions;

// A 3-d adaptive pool's output size; a nullopt entry keeps that input dim (PyTorch's None).
struct AdaptivePool3dFuncOptions {
  AdaptivePool3dFuncOptions(int64_t size) : output_size_{size, size, size} {}  // NOLINT
  AdaptivePool3dFuncOptions(std::optional<int64_t> d, std::optional<int64_t> h, std::optional<int64_t> w)
      : output_size_{d, h, w} {}
  AdaptivePool3dFuncOptions(std::initializer_list<int64_t> dhw);  // NOLINT: exactly three sizes
  const std::array<std::optional<int64_t>, 3>& output_size() const { return output_size_; }

 private:
  std::array<std::optional<int64_t>, 3> output_size_;
};
using AdaptiveAvgPool3dFuncOptions = AdaptivePool3dFuncOptions;
using AdaptiveMaxPool3dFuncOptions = AdaptivePool3dFuncOptions;

Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& options);
// The output and the flat (h * W + w) index of each maximum in its input plane, int64.
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const MaxPool2dFuncOptions& options);
Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& options);
Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& options);
Tensor adaptive_max_pool2d(const Tensor& input, const AdaptiveMaxPool2dFuncOptions& options);
std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool2dFuncOptions& options);

// 1-d ([N, C, L] or [C, L]; indices are positions l) and 3-d ([N, C, D, H, W] or [C, D, H, W];
// indices flat (d * H + h) * W + w).
Tensor max_pool1d(const Tensor& input, const MaxPool1dFuncOptions& options);
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, const MaxPool1dFuncOptions& options);
Tensor avg_pool1d(const Tensor& input, const AvgPool1dFuncOptions& options);
Tensor adaptive_avg_pool1d(const Tensor& input, const AdaptiveAvgPool1dFuncOptions& options);
Tensor adaptive_max_pool1d(const Tensor& input, const AdaptiveMaxPool1dFuncOptions& options);
std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool1dFuncOptions& options);
Tensor max_pool3d(const Tensor& input, const MaxPool3dFuncOptions& options);
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, const MaxPool3dFuncOptions& options);
Tensor avg_pool3d(const Tensor& input, const AvgPool3dFuncOptions& options);
Tensor adaptive_avg_pool3d(const Tensor& input, const AdaptiveAvgPool3dFuncOptions& options);
Tensor adaptive_max_pool3d(const Tensor& input, const AdaptiveMaxPool3dFuncOptions& options);
std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool3dFuncOptions& options);

}  // namespace cohort::nn::functional
