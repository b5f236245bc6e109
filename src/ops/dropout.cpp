// dropout as a mask multiplication (autograd differentiates it): the mask is kept, scaled, in the
// input's dtype, so the backward is one multiplication too. feature_dropout draws its per-channel
// mask with the same dropout_mask.
#include "cohort/ops/dropout.h"

#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "ops/internal.h"
#include "cohort/autograd/trace.h"

namespace cohort {

namespace {

// The scaled keep-mask for x, or an undefined tensor when dropout leaves x as it is.
Tensor keep_mask(const char* op, const Tensor& x, double p, bool train, Generator* generator) {
  detail::check_defined(op, x, "input");
  COHORT_CHECK(p >= 0 && p <= 1, op, ": probability has to be between 0 and 1, but got ", p);
  if (!train || p == 0) return Tensor();
  COHORT_CHECK_AS(TypeError, x.is_floating_point(), op, ": expected a floating-point input, got ", x.dtype());
  return detail::dropout_mask(x.sizes(), TensorOptions(x.dtype()).device(x.device()), p, generator);
}

}  // namespace

namespace detail {

Tensor dropout_mask(IntArrayRef sizes, const TensorOptions& options, double p, Generator* generator) {
  if (p == 1) return zeros(sizes, options);
  Tensor u = rand(sizes, generator ? *generator : default_generator(), options);
  return (u >= p).to(options.dtype()) * (1.0 / (1.0 - p));
}

}  // namespace detail

Tensor dropout(const Tensor& input, double p, bool train, Generator* generator) {
  trace::OpScope trace("dropout");  // in evaluation mode the identity, which needs no record
  trace.refuse_if(train && p > 0, "in training mode (its mask is random); hint: call module->eval() first");
  Tensor keep = keep_mask("dropout", input, p, train, generator);
  return keep.defined() ? input * keep : input;
}

Tensor& dropout_(Tensor& self, double p, bool train, Generator* generator) {
  Tensor keep = keep_mask("dropout_", self, p, train, generator);
  if (keep.defined()) self.mul_(keep);
  return self;
}

}  // namespace cohort
