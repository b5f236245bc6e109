// The functional layer and group norms: the ops of ops/normalization.h with nn's option structs.
#include "cohort/nn/functional/normalization.h"

#include "cohort/ops/normalization.h"

namespace cohort::nn::functional {

Tensor layer_norm(const Tensor& input, const LayerNormFuncOptions& o) {
  return cohort::layer_norm(input, o.normalized_shape(), o.weight(), o.bias(), o.eps());
}

Tensor group_norm(const Tensor& input, const GroupNormFuncOptions& o) {
  return cohort::group_norm(input, o.num_groups(), o.weight(), o.bias(), o.eps());
}

}  // namespace cohort::nn::functional
