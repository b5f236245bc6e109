// Loss modules over nn::functional's losses: forward(input, target).
#pragma once

#include "cohort/nn/functional/loss.h"
#include "cohort/nn/module_holder.h"

namespace cohort::nn {

struct ReductionOptions {
  ReductionOptions(Reduction r = kMean) : reduction_(r) {}  // NOLINT
  ReductionOptions& reduction(Reduction r) { reduction_ = r; return *this; }
  Reduction reduction() const { return reduction_; }

 private:
  Reduction reduction_;
};
using MSELossOptions = ReductionOptions;
using L1LossOptions = ReductionOptions;

struct SmoothL1LossOptions : ReductionOptions {
  SmoothL1LossOptions& beta(double b) { beta_ = b; return *this; }
  double beta() const { return beta_; }

 private:
  double beta_ = 1.0;
};

struct BCELossOptions : ReductionOptions {
  BCELossOptions& weight(Tensor w) { weight_ = std::move(w); return *this; }
  const Tensor& weight() const { return weight_; }

 private:
  Tensor weight_;
};

struct BCEWithLogitsLossOptions : BCELossOptions {
  BCEWithLogitsLossOptions& pos_weight(Tensor w) { pos_weight_ = std::move(w); return *this; }
  const Tensor& pos_weight() const { return pos_weight_; }

 private:
  Tensor pos_weight_;
};

using CrossEntropyLossOptions = functional::CrossEntropyOptions;
using NLLLossOptions = functional::NLLLossOptions;

// The shared part of the loss modules: options, no parameters.
template <class Options, class Derived>
class LossImpl : public Cloneable<Derived> {
 public:
  explicit LossImpl(Options options = {}) : options(std::move(options)) {}
  void reset() override {}
  Options options;
};

class MSELossImpl : public LossImpl<MSELossOptions, MSELossImpl> {
 public:
  using LossImpl::LossImpl;
  Tensor forward(const Tensor& input, const Tensor& target) { return functional::mse_loss(input, target, options.reduction()); }
  void pretty_print(std::ostream& os) const override { os << "MSELoss()"; }
};

class L1LossImpl : public LossImpl<L1LossOptions, L1LossImpl> {
 public:
  using LossImpl::LossImpl;
  Tensor forward(const Tensor& input, const Tensor& target) { return functional::l1_loss(input, target, options.reduction()); }
  void pretty_print(std::ostream& os) const override { os << "L1Loss()"; }
};

class SmoothL1LossImpl : public LossImpl<SmoothL1LossOptions, SmoothL1LossImpl> {
 public:
  using LossImpl::LossImpl;
  Tensor forward(const Tensor& input, const Tensor& target) {
    return functional::smooth_l1_loss(input, target, options.reduction(), options.beta());
  }
  void pretty_print(std::ostream& os) const override { os << "SmoothL1Loss()"; }
};

class CrossEntropyLossImpl : public LossImpl<CrossEntropyLossOptions, CrossEntropyLossImpl> {
 public:
  using LossImpl::LossImpl;
  Tensor forward(const Tensor& input, const Tensor& target) { return functional::cross_entropy(input, target, options); }
  void pretty_print(std::ostream& os) const override { os << "CrossEntropyLoss()"; }
};

class NLLLossImpl : public LossImpl<NLLLossOptions, NLLLossImpl> {
 public:
  using LossImpl::LossImpl;
  Tensor forward(const Tensor& input, const Tensor& target) { return functional::nll_loss(input, target, options); }
  void pretty_print(std::ostream& os) const override { os << "NLLLoss()"; }
};

class BCELossImpl : public LossImpl<BCELossOptions, BCELossImpl> {
 public:
  using LossImpl::LossImpl;
  Tensor forward(const Tensor& input, const Tensor& target) {
    return functional::binary_cross_entropy(input, target, options.weight(), options.reduction());
  }
  void pretty_print(std::ostream& os) const override { os << "BCELoss()"; }
};

class BCEWithLogitsLossImpl : public LossImpl<BCEWithLogitsLossOptions, BCEWithLogitsLossImpl> {
 public:
  using LossImpl::LossImpl;
  Tensor forward(const Tensor& input, const Tensor& target) {
    return functional::binary_cross_entropy_with_logits(input, target, options.weight(), options.pos_weight(),
                                                        options.reduction());
  }
  void pretty_print(std::ostream& os) const override { os << "BCEWithLogitsLoss()"; }
};

using MSELoss = ModuleHolder<MSELossImpl>;
using L1Loss = ModuleHolder<L1LossImpl>;
using SmoothL1Loss = ModuleHolder<SmoothL1LossImpl>;
using CrossEntropyLoss = ModuleHolder<CrossEntropyLossImpl>;
using NLLLoss = ModuleHolder<NLLLossImpl>;
using BCELoss = ModuleHolder<BCELossImpl>;
using BCEWithLogitsLoss = ModuleHolder<BCEWithLogitsLossImpl>;

}  // namespace cohort::nn
