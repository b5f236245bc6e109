// layer_norm and group_norm, composed of mean and the biased variance (autograd differentiates them
// to any order).
#include "cohort/ops/normalization.h"

#include <vector>

#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"

namespace cohort {

namespace {

// (x - mean) / sqrt(var + eps) over dims, var biased (divides by the count, as PyTorch's norms do).
Tensor normalize(const Tensor& x, IntArrayRef dims, double eps) {
  Tensor mu = mean(x, dims, /*keepdim=*/true);
  Tensor v = var(x, dims, /*unbiased=*/false, /*keepdim=*/true);
  return mul(sub(x, mu), rsqrt(add(v, eps)));
}

void check_affine(const char* op, const Tensor& t, const char* what, IntArrayRef shape) {
  if (!t.defined()) return;
  COHORT_CHECK(t.sizes() == shape, op, ": expected ", what, " of shape ", shape, ", got ", what, " of shape ", t.sizes());
}

}  // namespace

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const Tensor& weight, const Tensor& bias,
                  double eps, bool /*cudnn_enable*/) {
  COHORT_CHECK(input.defined(), "layer_norm: the input tensor is undefined");
  const IntArrayRef shape = normalized_shape;
  const int64_t k = static_cast<int64_t>(shape.size());
  bool ok = k >= 1 && input.dim() >= k;
  for (int64_t i = 0; ok && i < k; ++i) ok = input.size(input.dim() - k + i) == shape[i];
  COHORT_CHECK(ok, "layer_norm: expected an input whose last dims are normalized_shape=", shape,
               ", got input of shape ", input.sizes());
  check_affine("layer_norm", weight, "weight", shape);
  check_affine("layer_norm", bias, "bias", shape);
  std::vector<int64_t> dims;
  for (int64_t d = input.dim() - k; d < input.dim(); ++d) dims.push_back(d);
  Tensor y = normalize(input, dims, eps);
  if (weight.defined()) y = mul(y, weight);
  if (bias.defined()) y = add(y, bias);
  return y;
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps,
                  bool /*cudnn_enabled*/) {
  COHORT_CHECK(input.defined(), "group_norm: the input tensor is undefined");
  COHORT_CHECK(input.dim() >= 2, "group_norm: expected an input [N, C, ...] of at least 2 dims, got input of shape ",
               input.sizes());
  const int64_t N = input.size(0), C = input.size(1), G = num_groups;
  COHORT_CHECK(G > 0 && C % G == 0, "group_norm: expected the ", C, " channels of input ", input.sizes(),
               " to divide into num_groups=", G, " groups");
  check_affine("group_norm", weight, "weight", {C});
  check_affine("group_norm", bias, "bias", {C});
  Tensor y = normalize(input.reshape({N, G, -1}), {2}, eps).reshape(input.sizes());
  Shape affine_shape(static_cast<size_t>(input.dim() - 1), 1);  // [C, 1, ...] broadcasts over the trailing dims
  affine_shape[0] = C;
  if (weight.defined()) y = mul(y, weight.reshape(affine_shape));
  if (bias.defined()) y = add(y, bias.reshape(affine_shape));
  return y;
}

}  // namespace cohort
