// Pooling layers (libtorch's torch::nn::MaxPool1d/2d/3d, AvgPool1d/2d/3d, AdaptiveAvgPool1d/2d/3d,
// AdaptiveMaxPool1d/2d/3d):
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

// The 1- and 3-d pools (libtorch's MaxPoolImpl<D, Derived> and so on): one template per kind, and a
// named class per dim so that the module's name and repr are PyTorch's (MaxPool1d, AvgPool3d).
template <size_t D, class Derived>
class MaxPoolImpl : public Cloneable<Derived> {
 public:
  explicit MaxPoolImpl(const MaxPoolOptions<D>& options_) : options(options_) { reset(); }
  explicit MaxPoolImpl(ExpandingArray<D> kernel_size) : MaxPoolImpl(MaxPoolOptions<D>(kernel_size)) {}
  void reset() override;
  Tensor forward(const Tensor& input);
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

  MaxPoolOptions<D> options;
};

template <size_t D, class Derived>
class AvgPoolImpl : public Cloneable<Derived> {
 public:
  explicit AvgPoolImpl(const AvgPoolOptions<D>& options_) : options(options_) { reset(); }
  explicit AvgPoolImpl(ExpandingArray<D> kernel_size) : AvgPoolImpl(AvgPoolOptions<D>(kernel_size)) {}
  void reset() override;
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

  AvgPoolOptions<D> options;
};

template <class Options, class Derived>
class AdaptiveAvgPoolImpl : public Cloneable<Derived> {
 public:
  explicit AdaptiveAvgPoolImpl(const Options& options_) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

  Options options;
};

template <class Options, class Derived>
class AdaptiveMaxPoolImpl : public Cloneable<Derived> {
 public:
  explicit AdaptiveMaxPoolImpl(const Options& options_) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& input);
  std::tuple<Tensor, Tensor> forward_with_indices(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

  Options options;
};

using MaxPool1dOptions = MaxPoolOptions<1>;
using MaxPool3dOptions = MaxPoolOptions<3>;
using AvgPool1dOptions = AvgPoolOptions<1>;
using AvgPool3dOptions = AvgPoolOptions<3>;
using AdaptiveAvgPool1dOptions = functional::AdaptivePool1dFuncOptions;
using AdaptiveMaxPool1dOptions = functional::AdaptivePool1dFuncOptions;
using AdaptiveAvgPool3dOptions = functional::AdaptivePool3dFuncOptions;
using AdaptiveMaxPool3dOptions = functional::AdaptivePool3dFuncOptions;

class MaxPool1dImpl : public MaxPoolImpl<1, MaxPool1dImpl> {
 public:
  using MaxPoolImpl::MaxPoolImpl;
};
class MaxPool3dImpl : public MaxPoolImpl<3, MaxPool3dImpl> {
 public:
  using MaxPoolImpl::MaxPoolImpl;
};
class AvgPool1dImpl : public AvgPoolImpl<1, AvgPool1dImpl> {
 public:
  using AvgPoolImpl::AvgPoolImpl;
};
class AvgPool3dImpl : public AvgPoolImpl<3, AvgPool3dImpl> {
 public:
  using AvgPoolImpl::AvgPoolImpl;
};
class AdaptiveAvgPool1dImpl : public AdaptiveAvgPoolImpl<AdaptiveAvgPool1dOptions, AdaptiveAvgPool1dImpl> {
 public:
  using AdaptiveAvgPoolImpl::AdaptiveAvgPoolImpl;
};
class AdaptiveAvgPool3dImpl : public AdaptiveAvgPoolImpl<AdaptiveAvgPool3dOptions, AdaptiveAvgPool3dImpl> {
 public:
  using AdaptiveAvgPoolImpl::AdaptiveAvgPoolImpl;
};
class AdaptiveMaxPool1dImpl : public AdaptiveMaxPoolImpl<AdaptiveMaxPool1dOptions, AdaptiveMaxPool1dImpl> {
 public:
  using AdaptiveMaxPoolImpl::AdaptiveMaxPoolImpl;
};
class AdaptiveMaxPool3dImpl : public AdaptiveMaxPoolImpl<AdaptiveMaxPool3dOptions, AdaptiveMaxPool3dImpl> {
 public:
  using AdaptiveMaxPoolImpl::AdaptiveMaxPoolImpl;
};

using MaxPool1d = ModuleHolder<MaxPool1dImpl>;
using MaxPool3d = ModuleHolder<MaxPool3dImpl>;
using AvgPool1d = ModuleHolder<AvgPool1dImpl>;
using AvgPool3d = ModuleHolder<AvgPool3dImpl>;
using AdaptiveAvgPool1d = ModuleHolder<AdaptiveAvgPool1dImpl>;
using AdaptiveAvgPool3d = ModuleHolder<AdaptiveAvgPool3dImpl>;
using AdaptiveMaxPool1d = ModuleHolder<AdaptiveMaxPool1dImpl>;
using AdaptiveMaxPool3d = ModuleHolder<AdaptiveMaxPool3dImpl>;
using MaxPool2d = ModuleHolder<MaxPool2dImpl>;
using AvgPool2d = ModuleHolder<AvgPool2dImpl>;
using AdaptiveAvgPool2d = ModuleHolder<AdaptiveAvgPool2dImpl>;
using AdaptiveMaxPool2d = ModuleHolder<AdaptiveMaxPool2dImpl>;

}  // namespace cohort::nn
