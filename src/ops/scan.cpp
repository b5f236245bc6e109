// cumsum: the lane kernel forward, and a backward composed of ops (so it differentiates again).
#include "cohort/ops/reduction.h"

#include <algorithm>

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/shape.h"
#include "ops/cpu/lane_kernels.h"
#include "ops/internal.h"

namespace cohort {

Tensor cumsum(const Tensor& x_in, int64_t dim, std::optional<DType> dtype) {
  detail::check_defined("cumsum", x_in);
  dim = wrap_dim(dim, std::max<int64_t>(x_in.dim(), 1), "cumsum");
  const DType out_dtype = dtype ? *dtype : is_floating_point(x_in.dtype()) ? x_in.dtype() : kInt64;
  const Tensor x = x_in.to(out_dtype);
  if (x.dim() == 0) return x.clone();
  Tensor out = detail::make_empty(x.sizes(), out_dtype, x.device());
  if (out.numel() > 0) kernel::cumsum(out, x.detach().contiguous(), dim);
  if (!is_floating_point(out_dtype)) return out;
  return autograd::record("CumsumBackward0", out, {x}, [dim](const Tensor& g) {
    // Each input reaches every later output: the gradient is the reversed running sum of g,
    // sum(g) - cumsum(g) + g.
    return std::vector<Tensor>{g.sum({dim}, true) - cumsum(g, dim) + g};
  });
}

}  // namespace cohort
