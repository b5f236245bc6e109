// CosineSimilarity and PairwiseDistance (libtorch's torch::nn::CosineSimilarity / PairwiseDistance):
//   nn::CosineSimilarity cos(nn::CosineSimilarityOptions().dim(1));   Tensor s = cos(a, b);
// forward(x1, x2) is nn::functional::cosine_similarity / pairwise_distance
// (cohort/nn/functional/distance.h), with its errors. Printed as PyTorch: CosineSimilarity().
#pragma once

#include "cohort/nn/functional/distance.h"
#include "cohort/nn/module_holder.h"

namespace cohort::nn {

class CosineSimilarityImpl : public Cloneable<CosineSimilarityImpl> {
 public:
  explicit CosineSimilarityImpl(const CosineSimilarityOptions& options_ = {}) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& x1, const Tensor& x2) { return functional::cosine_similarity(x1, x2, options); }
  void pretty_print(std::ostream& os) const override { os << "CosineSimilarity()"; }
  CosineSimilarityOptions options;
};

class PairwiseDistanceImpl : public Cloneable<PairwiseDistanceImpl> {
 public:
  explicit PairwiseDistanceImpl(const PairwiseDistanceOptions& options_ = {}) : options(options_) {}
  void reset() override {}
  Tensor forward(const Tensor& x1, const Tensor& x2) { return functional::pairwise_distance(x1, x2, options); }
  void pretty_print(std::ostream& os) const override { os << "PairwiseDistance()"; }
  PairwiseDistanceOptions options;
};

using CosineSimilarity = ModuleHolder<CosineSimilarityImpl>;
using PairwiseDistance = ModuleHolder<PairwiseDistanceImpl>;

}  // namespace cohort::nn
