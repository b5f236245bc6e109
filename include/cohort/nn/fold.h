// Sliding-block layers (libtorch's torch::nn::Unfold and Fold):
//   nn::Unfold unfold(nn::UnfoldOptions({2, 3}).stride(2));   // [N, C, H, W] -> [N, C 6, L]
//   nn::Fold fold(nn::FoldOptions({4, 5}, {2, 2}));           // [N, C 4, L] -> [N, C, 4, 5]
// No parameters; forward is F::unfold / F::fold (cohort/nn/functional/fold.h), with their errors.
// Prints like PyTorch: Unfold(kernel_size=(2, 3), dilation=1, padding=0, stride=1).
#pragma once

#include "cohort/nn/functional/fold.h"
#include "cohort/nn/module_holder.h"

namespace cohort::nn {

class UnfoldImpl : public Cloneable<UnfoldImpl> {
 public:
  explicit UnfoldImpl(const UnfoldOptions& options_) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

  UnfoldOptions options;
};

class FoldImpl : public Cloneable<FoldImpl> {
 public:
  explicit FoldImpl(const FoldOptions& options_) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

  FoldOptions options;
};

using Unfold = ModuleHolder<UnfoldImpl>;
using Fold = ModuleHolder<FoldImpl>;

}  // namespace cohort::nn
