// feature_dropout: one keep-or-zero draw per (sample, channel), broadcast over the rest; composed of
// rand, a comparison and a multiply, so autograd differentiates it.
#include "cohort/ops/feature_dropout.h"

#include "cohort/ops/pointwise.h"
#include "ops/internal.h"
#include "cohort/autograd/trace.h"

namespace cohort {

namespace {

// The scaled mask [N, C, 1, ...] (kept: 1 / (1 - p), dropped: 0), or undefined when x passes unchanged.
Tensor feature_mask(const char* op, const Tensor& x, double p, bool train, Generator* generator) {
  detail::check_defined(op, x, "input");
  COHORT_CHECK(p >= 0 && p <= 1, op, ": dropout probability has to be between 0 and 1, but got ", p);
  COHORT_CHECK(x.dim() >= 2, op, ": expected an input of at least 2 dims [N, C, ...], got input of shape ", x.sizes(),
               "; hint: dim 0 is the batch and dim 1 the features (unsqueeze(0) an unbatched input)");
  COHORT_CHECK_AS(TypeError, x.is_floating_point(), op, ": expected a floating-point input, got ", x.dtype());
  if (!train || p == 0 || x.numel() == 0) return Tensor();
  const TensorOptions options = TensorOptions(x.dtype()).device(x.device());
  Shape sizes(static_cast<size_t>(x.dim()), 1);
  sizes[0] = x.size(0), sizes[1] = x.size(1);
  return detail::dropout_mask(sizes, options, p, generator);
}

}  // namespace

Tensor feature_dropout(const Tensor& input, double p, bool train, Generator* generator) {
  trace::OpScope trace("feature_dropout");  // in evaluation mode the identity, which needs no record
  trace.refuse_if(train && p > 0, "in training mode (its mask is random); hint: call module->eval() first");
  Tensor mask = feature_mask("feature_dropout", input, p, train, generator);
  return mask.defined() ? input * mask : input;
}

const Tensor& feature_dropout_(const Tensor& self, double p, bool train, Generator* generator) {
  Tensor mask = feature_mask("feature_dropout_", self, p, train, generator);
  if (mask.defined()) self.mul_(mask);
  return self;
}

}  // namespace cohort
