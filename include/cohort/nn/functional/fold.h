// Sliding blocks (nn::functional, spelled as libtorch's torch::nn::functional::unfold / fold):
//   F::unfold(x, F::UnfoldFuncOptions({3, 3}).padding(1))          // [N, C, H, W] -> [N, C 9, L]
//   F::fold(cols, F::FoldFuncOptions({H, W}, {3, 3}).padding(1))    // [N, C 9, L] -> [N, C, H, W]
// The options resolve to cohort::im2col / col2im (cohort/ops/fold.h), whose header gives the
// layout, the gradients and the errors. Defaults: dilation 1, padding 0, stride 1.
#pragma once

#include "cohort/core/expanding_array.h"
#include "cohort/core/tensor.h"

namespace cohort::nn {

struct UnfoldOptions {
  UnfoldOptions(ExpandingArray<2> kernel_size) : kernel_size_(kernel_size) {}  // NOLINT
  UnfoldOptions& kernel_size(ExpandingArray<2> k) { kernel_size_ = k; return *this; }
  UnfoldOptions& dilation(ExpandingArray<2> d) { dilation_ = d; return *this; }
  UnfoldOptions& padding(ExpandingArray<2> p) { padding_ = p; return *this; }
  UnfoldOptions& stride(ExpandingArray<2> s) { stride_ = s; return *this; }
  const ExpandingArray<2>& kernel_size() const { return kernel_size_; }
  const ExpandingArray<2>& dilation() const { return dilation_; }
  const ExpandingArray<2>& padding() const { return padding_; }
  const ExpandingArray<2>& stride() const { return stride_; }

 private:
  ExpandingArray<2> kernel_size_;
  ExpandingArray<2> dilation_ = 1;
  ExpandingArray<2> padding_ = 0;
  ExpandingArray<2> stride_ = 1;
};

struct FoldOptions {
  FoldOptions(ExpandingArray<2> output_size, ExpandingArray<2> kernel_size)
      : output_size_(output_size), kernel_size_(kernel_size) {}
  FoldOptions& output_size(ExpandingArray<2> s) { output_size_ = s; return *this; }
  FoldOptions& kernel_size(ExpandingArray<2> k) { kernel_size_ = k; return *this; }
  FoldOptions& dilation(ExpandingArray<2> d) { dilation_ = d; return *this; }
  FoldOptions& padding(ExpandingArray<2> p) { padding_ = p; return *this; }
  FoldOptions& stride(ExpandingArray<2> s) { stride_ = s; return *this; }
  const ExpandingArray<2>& output_size() const { return output_size_; }
  const ExpandingArray<2>& kernel_size() const { return kernel_size_; }
  const ExpandingArray<2>& dilation() const { return dilation_; }
  const ExpandingArray<2>& padding() const { return padding_; }
  const ExpandingArray<2>& stride() const { return stride_; }

 private:
  ExpandingArray<2> output_size_, kernel_size_;
  ExpandingArray<2> dilation_ = 1;
  ExpandingArray<2> padding_ = 0;
  ExpandingArray<2> stride_ = 1;
};

namespace functional {

using UnfoldFuncOptions = UnfoldOptions;
using FoldFuncOptions = FoldOptions;

Tensor unfold(const Tensor& input, const UnfoldFuncOptions& options);
Tensor fold(const Tensor& input, const FoldFuncOptions& options);

}  // namespace functional
}  // namespace cohort::nn
