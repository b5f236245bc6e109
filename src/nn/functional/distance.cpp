// cosine_similarity and pairwise_distance, composed of pointwise ops and reductions.
#include "cohort/nn/functional/distance.h"

#include <algorithm>

#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"

namespace cohort::nn::functional {

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, const CosineSimilarityFuncOptions& o) {
  COHORT_CHECK(x1.defined() && x2.defined(), "cosine_similarity: x1 and x2 must be defined");
  const DType common = result_type(x1, x2);
  COHORT_CHECK_AS(TypeError, common == kFloat32 || common == kFloat64 || common == kBFloat16 || common == kFloat16,
                  "cosine_similarity: expected a floating common dtype of x1 and x2, got ", common);
  // Both expanded to their broadcast shape first, so that dim counts in it (PyTorch's).
  const Shape shape = broadcast_shapes(x1.sizes(), x2.sizes(), "cosine_similarity");
  const Tensor a = x1.to(common).expand(shape), b = x2.to(common).expand(shape);
  const int64_t dim = o.dim();
  const double eps2 = o.eps() * o.eps();
  // Each squared norm is clamped below by eps^2 as PyTorch 1.13 does it, in place outside autograd:
  // the value is the clamped one, the gradient the unclamped one's.
  auto clamped = [&](const Tensor& t) {
    Tensor s = (t * t).sum({dim}, true);
    return s + (clamp_min(s, eps2) - s).detach();
  };
  Tensor denom = sqrt(clamped(a) * clamped(b));
  return ((a * b).sum({dim}, true) / denom).squeeze(dim);
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, const PairwiseDistanceFuncOptions& o) {
  COHORT_CHECK(x1.defined() && x2.defined(), "pairwise_distance: x1 and x2 must be defined");
  const int64_t last = std::max(x1.dim(), x2.dim()) - 1;
  return norm(x1 - x2 + o.eps(), o.p(), {last}, o.keepdim());
}

}  // namespace cohort::nn::functional
