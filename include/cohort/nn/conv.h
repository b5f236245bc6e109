// Conv1d, Conv2d and Conv3d layers (libtorch's torch::nn::Conv1d / Conv2d / Conv3d):
//   nn::Conv2d conv(nn::Conv2dOptions(3, 6, 5).stride(2).padding(1).groups(3));
//   Tensor y = conv(x);   // x [N, 3, H, W] or [3, H, W] -> [N, 6, P, Q]
// weight [out_channels, in_channels / groups, kernel...], bias [out_channels] (unless bias(false)).
// Initialised as PyTorch does: weight kaiming_uniform_(a = sqrt(5)), bias uniform in
// +-1/sqrt(fan_in). Prints like PyTorch: Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1)).
// forward is nn::functional::conv1d/conv2d/conv3d (cohort/nn/functional/conv.h), with its errors.
//
// ConvTranspose1d, 2d and 3d (libtorch's torch::nn::ConvTranspose1d / 2d / 3d):
//   nn::ConvTranspose2d up(nn::ConvTranspose2dOptions(16, 8, 4).stride(2).padding(1));
//   Tensor y = up(x);                   // [N, 16, 7, 7] -> [N, 8, 14, 14]
//   Tensor z = up->forward(x, {{15, 15}});  // output_size picks output_padding = 1
// weight [in_channels, out_channels / groups, kernel...], bias [out_channels]; the same init as Conv
// (whose fan_in is then out_channels / groups * kernel, as in PyTorch). Prints like PyTorch:
// ConvTranspose2d(16, 8, kernel_size=(4, 4), stride=(2, 2), padding=(1, 1)). forward is
// nn::functional::conv_transpose1d/2d; an output_size (the spatial sizes, or the full shape) outside
// the sizes the stride allows throws cohort::Error listing them.
#pragma once

#include <optional>

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
using Conv3dOptions = ConvOptions<3>;

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

class Conv3dImpl : public ConvNdImpl<3, Conv3dImpl> {
 public:
  explicit Conv3dImpl(const Conv3dOptions& options);
  Conv3dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<3> kernel_size)
      : Conv3dImpl(Conv3dOptions(in_channels, out_channels, kernel_size)) {}
  // [N, C, D, H, W] or [C, D, H, W] -> [N, O, P, Q, R] or [O, P, Q, R].
  Tensor forward(const Tensor& input);
};

using Conv1d = ModuleHolder<Conv1dImpl>;
using Conv2d = ModuleHolder<Conv2dImpl>;
using Conv3d = ModuleHolder<Conv3dImpl>;

template <size_t D>
struct ConvTransposeOptions {
  ConvTransposeOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  ConvTransposeOptions& stride(ExpandingArray<D> s) { stride_ = s; return *this; }
  ConvTransposeOptions& padding(ExpandingArray<D> p) { padding_ = p; return *this; }
  ConvTransposeOptions& output_padding(ExpandingArray<D> p) { output_padding_ = p; return *this; }
  ConvTransposeOptions& groups(int64_t g) { groups_ = g; return *this; }
  ConvTransposeOptions& bias(bool b) { bias_ = b; return *this; }
  ConvTransposeOptions& dilation(ExpandingArray<D> d) { dilation_ = d; return *this; }

  int64_t in_channels() const { return in_channels_; }
  int64_t out_channels() const { return out_channels_; }
  const ExpandingArray<D>& kernel_size() const { return kernel_size_; }
  const ExpandingArray<D>& stride() const { return stride_; }
  const ExpandingArray<D>& padding() const { return padding_; }
  const ExpandingArray<D>& output_padding() const { return output_padding_; }
  int64_t groups() const { return groups_; }
  bool bias() const { return bias_; }
  const ExpandingArray<D>& dilation() const { return dilation_; }

 private:
  int64_t in_channels_, out_channels_;
  ExpandingArray<D> kernel_size_;
  ExpandingArray<D> stride_ = 1;
  ExpandingArray<D> padding_ = 0;
  ExpandingArray<D> output_padding_ = 0;
  int64_t groups_ = 1;
  bool bias_ = true;
  ExpandingArray<D> dilation_ = 1;
};

using ConvTranspose1dOptions = ConvTransposeOptions<1>;
using ConvTranspose2dOptions = ConvTransposeOptions<2>;
using ConvTranspose3dOptions = ConvTransposeOptions<3>;

// What ConvTranspose1dImpl and ConvTranspose2dImpl share. Derived names the class.
template <size_t D, class Derived>
class ConvTransposeNdImpl : public Cloneable<Derived> {
 public:
  explicit ConvTransposeNdImpl(const ConvTransposeOptions<D>& options_) : options(options_) {}
  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& os) const override;
  // [N, C, L...] or [C, L...] -> [N, O, L'...] or [O, L'...]. output_size: the spatial sizes wanted
  // (or the whole output shape), which choose output_padding in place of the options'.
  Tensor forward(const Tensor& input, const std::optional<IntArrayRef>& output_size = std::nullopt);

  ConvTransposeOptions<D> options;
  Tensor weight;  // [in_channels, out_channels / groups, kernel_size...]
  Tensor bias;    // [out_channels], undefined without bias
};

class ConvTranspose1dImpl : public ConvTransposeNdImpl<1, ConvTranspose1dImpl> {
 public:
  explicit ConvTranspose1dImpl(const ConvTranspose1dOptions& options);
  ConvTranspose1dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<1> kernel_size)
      : ConvTranspose1dImpl(ConvTranspose1dOptions(in_channels, out_channels, kernel_size)) {}
};

class ConvTranspose2dImpl : public ConvTransposeNdImpl<2, ConvTranspose2dImpl> {
 public:
  explicit ConvTranspose2dImpl(const ConvTranspose2dOptions& options);
  ConvTranspose2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<2> kernel_size)
      : ConvTranspose2dImpl(ConvTranspose2dOptions(in_channels, out_channels, kernel_size)) {}
};

class ConvTranspose3dImpl : public ConvTransposeNdImpl<3, ConvTranspose3dImpl> {
 public:
  explicit ConvTranspose3dImpl(const ConvTranspose3dOptions& options);
  ConvTranspose3dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<3> kernel_size)
      : ConvTranspose3dImpl(ConvTranspose3dOptions(in_channels, out_channels, kernel_size)) {}
};

using ConvTranspose1d = ModuleHolder<ConvTranspose1dImpl>;
using ConvTranspose2d = ModuleHolder<ConvTranspose2dImpl>;
using ConvTranspose3d = ModuleHolder<ConvTranspose3dImpl>;

extern template class ConvNdImpl<1, Conv1dImpl>;
extern template class ConvNdImpl<2, Conv2dImpl>;
extern template class ConvNdImpl<3, Conv3dImpl>;
extern template class ConvTransposeNdImpl<1, ConvTranspose1dImpl>;
extern template class ConvTransposeNdImpl<2, ConvTranspose2dImpl>;
extern template class ConvTransposeNdImpl<3, ConvTranspose3dImpl>;

}  // namespace cohort::nn
