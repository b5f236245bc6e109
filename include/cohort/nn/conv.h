// Conv1d and Conv2d layers (libtorch's torch::nn::Conv1d / Conv2d):
//   nn::Conv2d conv(nn::Conv2dOptions(3, 6, 5).stride(2).padding(1).groups(3));
//   Tensor y = conv(x);   // x [N, 3, H, W] or [3, H, W] -> [N, 6, P, Q]
// weight [out_channels, in_channels / groups, kernel...], bias [out_channels] (unless bias(false)).
// Initialised as PyTorch does: weight kaiming_uniform_(a = sqrt(5)), bias uniform in
// +-1/sqrt(fan_in). Prints like PyTorch: Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1)).
// forward is nn::functional::conv1d/conv2d (cohort/nn/functional/conv.h), with its errors.
#pragma once

#include "cohort/nn/functional/conv.h"
#include "cohort/nn/module_holder.h"

namespace cohort::nn {

template <size_t D>
struct ConvOptions {
  ConvOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  ConvOptions& stride(ExpandingArray<D> s) { stride_ = s; return *this; }
  ConvOptions& padding(ExpandingArray<D> p) { padding_ = p; return *this; }
  ConvOptions& padding(SamePadding p) { padding_ = p; return *this; }
  ConvOptions& padding(ValidPadding p) { padding_ = p; return *this; }
  template <class P, std::enable_if_t<std::is_same_v<P, ConvPadding<D>>, int> = 0>
  ConvOptions& padding(const P& p) { padding_ = p; return *this; }  // the stored variant, as padding() returns it
  ConvOptions& dilation(ExpandingArray<D> d) { dilation_ = d; return *this; }
  ConvOptions& groups(int64_t g) { groups_ = g; return *this; }
  ConvOptions& bias(bool b) { bias_ = b; return *this; }

  int64_t in_channels() const { return in_channels_; }
  int64_t out_channels() const { return out_channels_; }
  const ExpandingArray<D>& kernel_size() const { return kernel_size_; }
  const ExpandingArray<D>& stride() const { return stride_; }
  const ConvPadding<D>& padding() const { return padding_; }
  const ExpandingArray<D>& dilation() const { return dilation_; }
  int64_t groups() const { return groups_; }
  bool bias() const { return bias_; }

 private:
  int64_t in_channels_, out_channels_;
  ExpandingArray<D> kernel_size_;
  ExpandingArray<D> stride_ = 1;
  ConvPadding<D> padding_ = ExpandingArray<D>(0);
  ExpandingArray<D> dilation_ = 1;
  int64_t groups_ = 1;
  bool bias_ = true;
};

using Conv1dOptions = ConvOptions<1>;
using Conv2dOptions = ConvOptions<2>;

// What Conv1dImpl and Conv2dImpl share: parameters, reset, printing. Derived names the class.
template <size_t D, class Derived>
class ConvNdImpl : public Cloneable<Derived> {
 public:
  explicit ConvNdImpl(const ConvOptions<D>& options_) : options(options_) {}
  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& os) const override;

  ConvOptions<D> options;
  Tensor weight;  // [out_channels, in_channels / groups, kernel_size...]
  Tensor bias;    // [out_channels], undefined without bias

 protected:
  functional::ConvFuncOptions<D> func_options() const;
};

class Conv1dImpl : public ConvNdImpl<1, Conv1dImpl> {
 public:
  explicit Conv1dImpl(const Conv1dOptions& options);
  Conv1dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<1> kernel_size)
      : Conv1dImpl(Conv1dOptions(in_channels, out_channels, kernel_size)) {}
  // [N, C, L] or [C, L] -> [N, O, L'] or [O, L'].
  Tensor forward(const Tensor& input);
};

class Conv2dImpl : public ConvNdImpl<2, Conv2dImpl> {
 public:
  explicit Conv2dImpl(const Conv2dOptions& options);
  Conv2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : Conv2dImpl(Conv2dOptions(in_channels, out_channels, kernel_size)) {}
  // [N, C, H, W] or [C, H, W] -> [N, O, P, Q] or [O, P, Q].
  Tensor forward(const Tensor& input);
};

using Conv1d = ModuleHolder<Conv1dImpl>;
using Conv2d = ModuleHolder<Conv2dImpl>;

extern template class ConvNdImpl<1, Conv1dImpl>;
extern template class ConvNdImpl<2, Conv2dImpl>;

}  // namespace cohort::nn
