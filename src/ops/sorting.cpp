// sort, argsort and topk: the order from the lane kernel, the values gathered through autograd.
#include "cohort/ops/sorting.h"

#include <algorithm>

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/indexing.h"
#include "cohort/ops/shape.h"
#include "ops/cpu/lane_kernels.h"
#include "ops/internal.h"

namespace cohort {

namespace {

// The first k positions of each lane's order along dim, int64 without autograd.
Tensor order(const Tensor& x, int64_t dim, bool descending, int64_t k) {
  const Tensor in = x.detach().contiguous();
  Shape sizes = in.sizes().vec();
  sizes[dim] = k;
  Tensor indices = detail::make_empty(sizes, kInt64, x.device());
  if (indices.numel() > 0) kernel::sort_indices(indices, in, dim, descending, k);
  return indices;
}

// A 0-d x is a lane of one: (x, 0), as PyTorch returns for every k it accepts (0 or 1).
std::tuple<Tensor, Tensor> sorted_prefix(const char* op, const Tensor& x, int64_t k, int64_t dim, bool descending) {
  detail::check_defined(op, x);
  dim = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), op);
  const int64_t n = x.dim() == 0 ? 1 : x.size(dim);
  COHORT_CHECK(k >= 0 && k <= n, op, ": k must be in [0, ", n, "] (the size of dim ", dim, " of input ", x.sizes(),
               "), got ", k);
  if (x.dim() == 0) return {x.view({}), zeros({}, TensorOptions(kInt64).device(x.device()))};
  Tensor indices = order(x, dim, descending, k);
  return {gather(x, dim, indices), indices};
}

}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending) {
  detail::check_defined("sort", x);
  const int64_t n = x.dim() == 0 ? 1 : x.size(wrap_dim(dim, x.dim(), "sort"));
  return sorted_prefix("sort", x, n, dim, descending);
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending) {
  detail::check_defined("argsort", x);
  if (x.dim() == 0) return std::get<1>(sorted_prefix("argsort", x, 1, dim, descending));
  dim = wrap_dim(dim, x.dim(), "argsort");
  return order(x, dim, descending, x.size(dim));
}

std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool /*sorted*/) {
  return sorted_prefix("topk", x, k, dim, largest);
}

}  // namespace cohort
