// 2-d pooling (nn::functional, spelled as libtorch's torch::nn::functional):
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

namespace cohort::nn::functional {

struct MaxPool2dFuncOptions {
  MaxPool2dFuncOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  MaxPool2dFuncOptions& stride(ExpandingArray<2> s) { stride_ = s; return *this; }
  MaxPool2dFuncOptions& padding(ExpandingArray<2> p) { padding_ = p; return *this; }
  MaxPool2dFuncOptions& dilation(ExpandingArray<2> d) { dilation_ = d; return *this; }
  MaxPool2dFuncOptions& ceil_mode(bool c) { ceil_mode_ = c; return *this; }
  const ExpandingArray<2>& kernel_size() const { return kernel_size_; }
  const ExpandingArray<2>& stride() const { return stride_; }
  const ExpandingArray<2>& padding() const { return padding_; }
  const ExpandingArray<2>& dilation() const { return dilation_; }
  bool ceil_mode() const { return ceil_mode_; }

 private:
  ExpandingArray<2> kernel_size_, stride_;
  ExpandingArray<2> padding_ = 0;
  ExpandingArray<2> dilation_ = 1;
  bool ceil_mode_ = false;
};

struct AvgPool2dFuncOptions {
  AvgPool2dFuncOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size), stride_(kernel_size) {}  // NOLINT
  AvgPool2dFuncOptions& stride(ExpandingArray<2> s) { stride_ = s; return *this; }
  AvgPool2dFuncOptions& padding(ExpandingArray<2> p) { padding_ = p; return *this; }
  AvgPool2dFuncOptions& ceil_mode(bool c) { ceil_mode_ = c; return *this; }
  AvgPool2dFuncOptions& count_include_pad(bool c) { count_include_pad_ = c; return *this; }
  const ExpandingArray<2>& kernel_size() const { return kernel_size_; }
  const ExpandingArray<2>& stride() const { return stride_; }
  const ExpandingArray<2>& padding() const { return padding_; }
  bool ceil_mode() const { return ceil_mode_; }
  bool count_include_pad() const { return count_include_pad_; }

 private:
  ExpandingArray<2> kernel_size_, stride_;
  ExpandingArray<2> padding_ = 0;
  bool ceil_mode_ = false;
  bool count_include_pad_ = true;
};

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

Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& options);
// The output and the flat (h * W + w) index of each maximum in its input plane, int64.
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const MaxPool2dFuncOptions& options);
Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& options);
Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& options);
Tensor adaptive_max_pool2d(const Tensor& input, const AdaptiveMaxPool2dFuncOptions& options);
std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool2dFuncOptions& options);

}  // namespace cohort::nn::functional
