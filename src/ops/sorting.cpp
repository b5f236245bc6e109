// sort, argsort and topk: the order from the lane kernel, the values gathered through autograd.
#include "cohort/ops/sorting.h"

#include <algorithm>
#include <optional>

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

// The lane an op sorts: dim wrapped, and how many of its first positions to keep (k; nullopt: all),
// checked. A 0-d x is a lane of one.
struct Lane {
  int64_t dim, k;
};
Lane lane_of(const char* op, const Tensor& x, int64_t dim, std::optional<int64_t> k) {
  detail::check_defined(op, x);
  dim = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), op);
  const int64_t n = x.dim() == 0 ? 1 : x.size(dim);
  COHORT_CHECK(!k || (*k >= 0 && *k <= n), op, ": k must be in [0, ", n, "] (the size of dim ", dim, " of input ",
               x.sizes(), "), got ", k.value_or(0));
  return {dim, k.value_or(n)};
}

// (values, indices) of the lane's first positions; for a 0-d x, (x, 0), as PyTorch returns for
// every k it accepts (0 or 1).
std::tuple<Tensor, Tensor> sorted(const Tensor& x, Lane lane, bool descending) {
  if (x.dim() == 0) return {x.view({}), zeros({}, TensorOptions(kInt64).device(x.device()))};
  Tensor indices = order(x, lane.dim, descending, lane.k);
  return {gather(x, lane.dim, indices), indices};
}

}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim, bool descending) {
  return sorted(x, lane_of("sort", x, dim, std::nullopt), descending);
}

Tensor argsort(const Tensor& x, int64_t dim, bool descending) {
  const Lane lane = lane_of("argsort", x, dim, std::nullopt);
  if (x.dim() == 0) return zeros({}, TensorOptions(kInt64).device(x.device()));
  return order(x, lane.dim, descending, lane.k);
}

std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim, bool largest, bool /*sorted*/) {
  return sorted(x, lane_of("topk", x, dim, k), largest);
}

}  // namespace cohort
