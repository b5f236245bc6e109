// nonzero and the unique family. Plain loops over a contiguous copy: the result sizes depend on the
// values, so these are computed on the host in one pass, no kernel of their own.
#include "cohort/ops/unique.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/indexing.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/shape.h"
#include "ops/internal.h"

namespace cohort {

namespace {

Tensor int64_tensor(const std::vector<int64_t>& v, IntArrayRef shape, Device device) {
  return tensor(ArrayRef<int64_t>(v), TensorOptions(kInt64).device(device)).reshape(shape);
}

Tensor empty_int64(Device device) { return zeros({0}, TensorOptions(kInt64).device(device)); }

// The rows [n, width] of `flat` (contiguous) grouped into distinct rows, ascending: `first` holds
// one row number per group, `group` each row's group, `counts` each group's size.
struct Groups {
  std::vector<int64_t> first, group, counts;
};

Groups group_rows(const char* op, const Tensor& flat, int64_t n, int64_t width) {
  return dispatch(flat.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T* p = flat.data_ptr<T>();
    // NaN sorts after every number (and ties with NaN), so the order is strict and weak; `same`
    // still tells NaNs apart, so each NaN is a value of its own, as in PyTorch's values (whose
    // inverse and counts for NaN are not meaningful in 1.13: it counts them 0).
    auto before = [](T u, T v) { return u == u && (v != v || u < v); };
    auto less = [&](int64_t a, int64_t b) {
      return std::lexicographical_compare(p + a * width, p + (a + 1) * width, p + b * width, p + (b + 1) * width,
                                          before);
    };
    auto same = [&](int64_t a, int64_t b) { return std::equal(p + a * width, p + (a + 1) * width, p + b * width); };
    std::vector<int64_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), less);
    Groups g;
    g.group.resize(n);
    for (int64_t k = 0; k < n; ++k) {
      if (k == 0 || !same(order[k - 1], order[k])) g.first.push_back(order[k]), g.counts.push_back(0);
      g.group[order[k]] = static_cast<int64_t>(g.first.size()) - 1;
      ++g.counts.back();
    }
    return g;
  });
}

}  // namespace

Tensor nonzero(const Tensor& x) {
  detail::check_defined("nonzero", x);
  NoGradGuard no_grad;
  Tensor m = x.dtype() == kBool ? x.contiguous() : x.ne(0).contiguous();
  const bool* p = m.data_ptr<bool>();
  const int64_t nd = x.dim();
  std::vector<int64_t> out, idx(nd, 0);
  int64_t rows = 0;
  for (int64_t i = 0; i < m.numel(); ++i) {
    if (p[i]) out.insert(out.end(), idx.begin(), idx.end()), ++rows;
    for (int64_t d = nd - 1; d >= 0; --d) {
      if (++idx[d] < x.size(d)) break;
      idx[d] = 0;
    }
  }
  return int64_tensor(out, {rows, nd}, x.device());
}

std::tuple<Tensor, Tensor, Tensor> _unique2(const Tensor& x, bool, bool return_inverse, bool return_counts) {
  detail::check_defined("_unique2", x);
  NoGradGuard no_grad;
  Tensor flat = x.reshape({-1}).contiguous();
  Groups g = group_rows("unique", flat, flat.numel(), 1);
  Tensor values = index_select(flat, 0, int64_tensor(g.first, {static_cast<int64_t>(g.first.size())}, x.device()));
  Tensor inverse = return_inverse ? int64_tensor(g.group, x.sizes(), x.device()) : empty_int64(x.device());
  Tensor counts = return_counts ? int64_tensor(g.counts, {static_cast<int64_t>(g.counts.size())}, x.device())
                                : empty_int64(x.device());
  return {values, inverse, counts};
}

std::tuple<Tensor, Tensor> _unique(const Tensor& x, bool sorted, bool return_inverse) {
  auto [values, inverse, counts] = _unique2(x, sorted, return_inverse, false);
  return {values, inverse};
}

std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& x, int64_t dim, bool, bool return_inverse,
                                              bool return_counts) {
  detail::check_defined("unique_dim", x);
  NoGradGuard no_grad;
  const int64_t d = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "unique_dim");
  Tensor in = x.dim() == 0 ? x.reshape({1}) : x;
  const int64_t n = in.size(d);
  const int64_t width = n == 0 ? 0 : in.numel() / n;
  Shape perm{d};  // dim d first, the others in order: slices compare in row-major order, as PyTorch's
  for (int64_t k = 0; k < in.dim(); ++k)
    if (k != d) perm.push_back(k);
  Tensor rows = in.permute(perm).contiguous();
  Groups g = group_rows("unique_dim", rows, n, width);
  Tensor values = index_select(in, d, int64_tensor(g.first, {static_cast<int64_t>(g.first.size())}, x.device()));
  Tensor inverse = return_inverse ? int64_tensor(g.group, {n}, x.device()) : empty_int64(x.device());
  Tensor counts = return_counts ? int64_tensor(g.counts, {static_cast<int64_t>(g.counts.size())}, x.device())
                                : empty_int64(x.device());
  return {values, inverse, counts};
}

std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& x, bool sorted, bool return_inverse, bool return_counts,
                                          std::optional<int64_t> dim) {
  return dim ? unique_dim(x, *dim, sorted, return_inverse, return_counts)
             : _unique2(x, sorted, return_inverse, return_counts);
}

Tensor Tensor::nonzero() const { return cohort::nonzero(*this); }

}  // namespace cohort
