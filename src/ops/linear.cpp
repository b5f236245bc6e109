// linear: one addmm (the bias added in the product's pass, Note [Fused addend] in dnnl/matmul.cpp)
// for an input whose leading dims fold into rows; matmul plus a broadcast add otherwise.
#include "cohort/ops/linalg.h"

#include "cohort/ops/pointwise.h"
#include "cohort/autograd/trace.h"
#include "ops/autocast_casts.h"

namespace cohort {

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return linear(autocast::to_lower(input), autocast::to_lower(weight), autocast::to_lower(bias));
  }
  trace::OpScope trace("linear");
  COHORT_CHECK(input.defined() && weight.defined(), "linear: input and weight must be defined");
  COHORT_CHECK(weight.dim() == 2, "linear: expected a 2-d weight [out_features, in_features], got shape ", weight.sizes());
  COHORT_CHECK(input.dim() >= 1 && input.size(-1) == weight.size(1), "linear: input of shape ", input.sizes(),
               " does not match in_features=", weight.size(1), " of weight ", weight.sizes(),
               " (the last input dim must equal in_features)");
  Tensor out;
  if (bias.defined() && (input.dim() == 2 || (input.dim() > 2 && input.is_contiguous()))) {
    Shape out_sizes = input.sizes().vec();
    out_sizes.back() = weight.size(0);
    out = addmm(bias, input.dim() == 2 ? input : input.reshape({-1, input.size(-1)}), weight.t());
    if (input.dim() > 2) out = out.view(out_sizes);
  } else {
    out = matmul(input, weight.t());
    if (bias.defined()) out = out + bias;
  }
  if (trace) trace.record({input, weight, bias}, out);
  return out;
}

}  // namespace cohort
