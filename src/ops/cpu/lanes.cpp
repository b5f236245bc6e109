// Lane kernels (lane_kernels.h): cumsum, and the sort and top-k orders.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <vector>

#include "ops/cpu/lane_kernels.h"
#include "ops/cpu/loops.h"
#include "ops/cpu/reduced.h"

namespace cohort::kernel {

namespace {

struct Lanes {
  int64_t outer = 1, n = 1, inner = 1;
  Lanes(IntArrayRef sizes, int64_t dim) {
    for (int64_t d = 0; d < static_cast<int64_t>(sizes.size()); ++d) {
      if (d < dim) outer *= sizes[d];
      if (d > dim) inner *= sizes[d];
    }
    n = sizes.empty() ? 1 : sizes[dim];
  }
  int64_t count() const { return outer * inner; }
  int64_t start(int64_t lane) const { return (lane / inner) * n * inner + lane % inner; }
};

// Lanes per thread range: enough elements that a range is worth a thread.
int64_t lane_grain(int64_t n) { return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(n, 1)); }

// NaN above every number; otherwise the usual order.
template <class T>
bool less_nan_last(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

}  // namespace

void cumsum(const Tensor& out, const Tensor& in, int64_t dim) {
  if (is_reduced_floating_point(in.dtype()) || is_reduced_floating_point(out.dtype())) {
    const Tensor wide = widen(in);
    return into(out, [&](const Tensor& o) { cumsum(o, wide, dim); });
  }
  const Lanes g(in.sizes(), dim);
  dispatch(in.dtype(), [&](auto in_tag) {
    using T = decltype(in_tag);
    using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
    dispatch(out.dtype(), [&](auto out_tag) {
      using O = decltype(out_tag);
      const T* x = in.data_ptr<T>();
      O* y = out.data_ptr<O>();
      parallel_for(g.count(), lane_grain(g.n), [&](int64_t begin, int64_t end) {
        for (int64_t lane = begin; lane < end; ++lane) {
          const int64_t s = g.start(lane);
          Acc acc = 0;
          for (int64_t j = 0; j < g.n; ++j) {
            acc += static_cast<Acc>(x[s + j * g.inner]);
            y[s + j * g.inner] = static_cast<O>(acc);
          }
        }
      });
    });
  });
}

void sort_indices(const Tensor& indices, const Tensor& in, int64_t dim, bool descending, int64_t k) {
  if (is_reduced_floating_point(in.dtype())) return sort_indices(indices, widen(in), dim, descending, k);
  const Lanes g(in.sizes(), dim);
  dispatch(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.data_ptr<T>();
    int64_t* out = indices.data_ptr<int64_t>();
    parallel_for(g.count(), lane_grain(g.n), [&](int64_t begin, int64_t end) {
      std::vector<int64_t> order(static_cast<size_t>(g.n));
      for (int64_t lane = begin; lane < end; ++lane) {
        const int64_t s = g.start(lane);
        auto value = [&](int64_t j) { return x[s + j * g.inner]; };
        // Ties keep their positions' order: compare positions when the values are equal.
        auto before = [&](int64_t a, int64_t b) {
          const T va = value(a), vb = value(b);
          if (descending ? less_nan_last(vb, va) : less_nan_last(va, vb)) return true;
          if (descending ? less_nan_last(va, vb) : less_nan_last(vb, va)) return false;
          return a < b;
        };
        std::iota(order.begin(), order.end(), int64_t{0});
        if (k < g.n)
          std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
        else
          std::sort(order.begin(), order.end(), before);
        const int64_t o = (lane / g.inner) * k * g.inner + lane % g.inner;
        for (int64_t j = 0; j < k; ++j) out[o + j * g.inner] = order[static_cast<size_t>(j)];
      }
    });
  });
}

}  // namespace cohort::kernel
