// Loss modules over nn::functional's losses: forward(input, target), or forward(input1, input2,
// target) for the ranking and embedding losses; their options in nn/loss_options.h.
#pragma once

#include "cohort/nn/functional/loss.h"
#include "cohort/nn/module_holder.h"

namespace cohort::nn {

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
  Tensor forward(const Tensor& input, const Tensor& target) { return functional::mse_loss(input, target, options); }
  void pretty_print(std::ostream& os) const override { os << "MSELoss()"; }
};

class L1LossImpl : public LossImpl<L1LossOptions, L1LossImpl> {
 public:
  using LossImpl::LossImpl;
  Tensor forward(const Tensor& input, const Tensor& target) { return functional::l1_loss(input, target, options); }
  void pretty_print(std::ostream& os) const override { os << "L1Loss()"; }
};

class SmoothL1LossImpl : public LossImpl<SmoothL1LossOptions, SmoothL1LossImpl> {
 public:
  using LossImpl::LossImpl;
  Tensor forward(const Tensor& input, const Tensor& target) {
    return functional::smooth_l1_loss(input, target, options);
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
    return functional::binary_cross_entropy(input, target, options);
  }
  void pretty_print(std::ostream& os) const override { os << "BCELoss()"; }
};

class BCEWithLogitsLossImpl : public LossImpl<BCEWithLogitsLossOptions, BCEWithLogitsLossImpl> {
 public:
  using LossImpl::LossImpl;
  Tensor forward(const Tensor& input, const Tensor& target) {
    return functional::binary_cross_entropy_with_logits(input, target, options);
  }
  void pretty_print(std::ostream& os) const override { os << "BCEWithLogitsLoss()"; }
};

class HuberLossImpl : public LossImpl<HuberLossOptions, HuberLossImpl> {
 public:
  using LossImpl::LossImpl;
  Tensor forward(const Tensor& input, const Tensor& target) { return functional::huber_loss(input, target, options); }
  void pretty_print(std::ostream& os) const override { os << "HuberLoss()"; }
};

class KLDivLossImpl : public LossImpl<KLDivLossOptions, KLDivLossImpl> {
 public:
  using LossImpl::LossImpl;
  Tensor forward(const Tensor& input, const Tensor& target) { return functional::kl_div(input, target, options); }
  void pretty_print(std::ostream& os) const override { os << "KLDivLoss()"; }
};

class SoftMarginLossImpl : public LossImpl<SoftMarginLossOptions, SoftMarginLossImpl> {
 public:
  using LossImpl::LossImpl;
  Tensor forward(const Tensor& input, const Tensor& target) { return functional::soft_margin_loss(input, target, options); }
  void pretty_print(std::ostream& os) const override { os << "SoftMarginLoss()"; }
};

class HingeEmbeddingLossImpl : public LossImpl<HingeEmbeddingLossOptions, HingeEmbeddingLossImpl> {
 public:
  using LossImpl::LossImpl;
  Tensor forward(const Tensor& input, const Tensor& target) { return functional::hinge_embedding_loss(input, target, options); }
  void pretty_print(std::ostream& os) const override { os << "HingeEmbeddingLoss()"; }
};

class PoissonNLLLossImpl : public LossImpl<PoissonNLLLossOptions, PoissonNLLLossImpl> {
 public:
  using LossImpl::LossImpl;
  Tensor forward(const Tensor& input, const Tensor& target) { return functional::poisson_nll_loss(input, target, options); }
  void pretty_print(std::ostream& os) const override { os << "PoissonNLLLoss()"; }
};

class MarginRankingLossImpl : public LossImpl<MarginRankingLossOptions, MarginRankingLossImpl> {
 public:
  using LossImpl::LossImpl;
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target) {
    return functional::margin_ranking_loss(input1, input2, target, options);
  }
  void pretty_print(std::ostream& os) const override { os << "MarginRankingLoss()"; }
};

class CosineEmbeddingLossImpl : public LossImpl<CosineEmbeddingLossOptions, CosineEmbeddingLossImpl> {
 public:
  using LossImpl::LossImpl;
  Tensor forward(const Tensor& input1, const Tensor& input2, const Tensor& target) {
    return functional::cosine_embedding_loss(input1, input2, target, options);
  }
  void pretty_print(std::ostream& os) const override { os << "CosineEmbeddingLoss()"; }
};

using MSELoss = ModuleHolder<MSELossImpl>;
using L1Loss = ModuleHolder<L1LossImpl>;
using SmoothL1Loss = ModuleHolder<SmoothL1LossImpl>;
using CrossEntropyLoss = ModuleHolder<CrossEntropyLossImpl>;
using NLLLoss = ModuleHolder<NLLLossImpl>;
using BCELoss = ModuleHolder<BCELossImpl>;
using BCEWithLogitsLoss = ModuleHolder<BCEWithLogitsLossImpl>;
using HuberLoss = ModuleHolder<HuberLossImpl>;
using KLDivLoss = ModuleHolder<KLDivLossImpl>;
using SoftMarginLoss = ModuleHolder<SoftMarginLossImpl>;
using HingeEmbeddingLoss = ModuleHolder<HingeEmbeddingLossImpl>;
using PoissonNLLLoss = ModuleHolder<PoissonNLLLossImpl>;
using MarginRankingLoss = ModuleHolder<MarginRankingLossImpl>;
using CosineEmbeddingLoss = ModuleHolder<CosineEmbeddingLossImpl>;

}  // namespace cohort::nn
