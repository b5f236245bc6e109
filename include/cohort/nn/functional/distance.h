// Distances between rows in nn::functional, spelled as libtorch's (torch/nn/functional/distance.h):
//   F::cosine_similarity(a, b, F::CosineSimilarityFuncOptions().dim(1).eps(1e-8))
//   F::pairwise_distance(a, b, F::PairwiseDistanceFuncOptions().p(1).keepdim(true))
// Composed of pointwise ops and reductions, so differentiable to any order.
#pragma once

#include <cstdint>

#include "cohort/core/tensor.h"

namespace cohort::nn {

struct CosineSimilarityOptions {
  CosineSimilarityOptions& dim(int64_t v) { dim_ = v; return *this; }
  CosineSimilarityOptions& eps(double v) { eps_ = v; return *this; }
  int64_t dim() const { return dim_; }
  double eps() const { return eps_; }

 private:
  int64_t dim_ = 1;
  double eps_ = 1e-8;
};

struct PairwiseDistanceOptions {
  PairwiseDistanceOptions& p(double v) { p_ = v; return *this; }
  PairwiseDistanceOptions& eps(double v) { eps_ = v; return *this; }
  PairwiseDistanceOptions& keepdim(bool v) { keepdim_ = v; return *this; }
  double p() const { return p_; }
  double eps() const { return eps_; }
  bool keepdim() const { return keepdim_; }

 private:
  double p_ = 2.0, eps_ = 1e-6;
  bool keepdim_ = false;
};

namespace functional {

using CosineSimilarityFuncOptions = CosineSimilarityOptions;
using PairwiseDistanceFuncOptions = PairwiseDistanceOptions;

// sum(x1 x2) / sqrt(max(sum(x1^2), eps^2) max(sum(x2^2), eps^2)) along dim, x1 and x2 broadcast
// together (PyTorch 1.13's formula; the clamps, as there, are invisible to the gradient). The result
// has the broadcast shape without dim. Throws TypeError unless the common dtype is floating.
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, const CosineSimilarityFuncOptions& options = {});
// The p-norm of x1 - x2 + eps along the last dim of the broadcast shape.
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, const PairwiseDistanceFuncOptions& options = {});

}  // namespace functional
}  // namespace cohort::nn
