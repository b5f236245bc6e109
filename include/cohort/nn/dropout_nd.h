// Channel-wise dropout layers (libtorch's torch::nn::Dropout2d, Dropout3d, and Dropout1d as PyTorch
// has it): in training, each channel of each sample is zeroed whole with probability p and the kept
// ones scaled by 1 / (1 - p); the identity in eval mode.
//   nn::Dropout2d drop(nn::Dropout2dOptions(0.2));   // or nn::Dropout2d(0.2)
//   Tensor y = drop(x);   // x [N, C, H, W] or [C, H, W], same shape out
// Options are DropoutOptions (p, inplace), as in libtorch. Masks come from the default generator
// (manual_seed repeats them), one draw per (sample, channel): nn::functional::dropout2d
// (cohort/nn/functional/dropout_nd.h) and cohort::feature_dropout say more. Prints like PyTorch:
// Dropout2d(p=0.5, inplace=False).
#pragma once

#include "cohort/nn/basic.h"
#include "cohort/nn/functional/dropout_nd.h"
#include "cohort/nn/module_holder.h"

namespace cohort::nn {

using Dropout1dOptions = DropoutOptions;
using Dropout2dOptions = DropoutOptions;
using Dropout3dOptions = DropoutOptions;

// Dropout1d/2d/3d differ in their spatial dims (D) and name; Derived names the class.
template <int64_t D, class Derived>
class DropoutNdImpl : public Cloneable<Derived> {
 public:
  explicit DropoutNdImpl(const DropoutOptions& options_ = {}) : options(options_) { reset(); }
  void reset() override;
  Tensor forward(const Tensor& x);
  void pretty_print(std::ostream& os) const override;
  DropoutOptions options;
};

class Dropout1dImpl : public DropoutNdImpl<1, Dropout1dImpl> {
 public:
  using DropoutNdImpl::DropoutNdImpl;
};
class Dropout2dImpl : public DropoutNdImpl<2, Dropout2dImpl> {
 public:
  using DropoutNdImpl::DropoutNdImpl;
};
class Dropout3dImpl : public DropoutNdImpl<3, Dropout3dImpl> {
 public:
  using DropoutNdImpl::DropoutNdImpl;
};

using Dropout1d = ModuleHolder<Dropout1dImpl>;
using Dropout2d = ModuleHolder<Dropout2dImpl>;
using Dropout3d = ModuleHolder<Dropout3dImpl>;

extern template class DropoutNdImpl<1, Dropout1dImpl>;
extern template class DropoutNdImpl<2, Dropout2dImpl>;
extern template class DropoutNdImpl<3, Dropout3dImpl>;

}  // namespace cohort::nn
