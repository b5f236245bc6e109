// 2-d pooling layers (libtorch's torch::nn::MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, AdaptiveMaxPool2d):
//   nn::MaxPool2d pool(nn::MaxPool2dOptions(3).stride(2).padding(1));
//   nn::AdaptiveAvgPool2d gap(nn::AdaptiveAvgPool2dOptions({1, 1}));
//   Tensor y = pool(x);   // x [N, C, H, W] or [C, H, W]
// No parameters. forward is the nn::functional form (cohort/nn/functional/pooling.h), with its
// errors. Prints like PyTorch: MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)
// (a size whose entries are equal prints as one number, as when given to PyTorch as an int).
#pragma once

#include "cohort/nn/functional/pooling.h"
#include "cohort/nn/module_holder.h"

namespace cohort::nn {

using MaxPool2dOptions = functional::MaxPool2dFuncOptions;
using AvgPool2dOptions = functional::AvgPool2dFuncOptions;
using AdaptiveAvgPool2dOptions = functional::AdaptivePool2dFuncOptions;
using AdaptiveMaxPool2dOptions = functional::AdaptivePool2dFuncOptions;

class MaxPool2dImpl : public Cloneable<MaxPool2dImpl> {
 public:
  explicit MaxPool2dImpl(const MaxPool2dOptions& options_) : options(options_) { reset(); }
  explicit MaxPool2dImpl(ExpandingArray<2> kernel_size) : MaxPool2dImpl(MaxPool2dOptions(kernel_size)) {}
  void reset() override;
  Tensor forward(const Tensor& input);
  // The output and the argmax indices (see functional::max_pool2d_with_indices).
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

  MaxPool2dOptions options;
};

class AvgPool2dImpl : public Cloneable<AvgPool2dImpl> {
 public:
  explicit AvgPool2dImpl(const AvgPool2dOptions& options_) : options(options_) { reset(); }
  explicit AvgPool2dImpl(ExpandingArray<2> kernel_size) : AvgPool2dImpl(AvgPool2dOptions(kernel_size)) {}
  void reset() override;
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

  AvgPool2dOptions options;
};

class AdaptiveAvgPool2dImpl : public Cloneable<AdaptiveAvgPool2dImpl> {
 public:
  explicit AdaptiveAvgPool2dImpl(const AdaptiveAvgPool2dOptions& options_) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

  AdaptiveAvgPool2dOptions options;
};

class AdaptiveMaxPool2dImpl : public Cloneable<AdaptiveMaxPool2dImpl> {
 public:
  explicit AdaptiveMaxPool2dImpl(const AdaptiveMaxPool2dOptions& options_) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& input);
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

  AdaptiveMaxPool2dOptions options;
};

using MaxPool2d = ModuleHolder<MaxPool2dImpl>;
using AvgPool2d = ModuleHolder<AvgPool2dImpl>;
using AdaptiveAvgPool2d = ModuleHolder<AdaptiveAvgPool2dImpl>;
using AdaptiveMaxPool2d = ModuleHolder<AdaptiveMaxPool2dImpl>;

}  // namespace cohort::nn
