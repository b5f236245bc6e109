// Softmax and log-softmax along one dim of a contiguous tensor, as [outer, n, inner].
#include <cmath>
#include <limits>

#include "ops/cpu/kernels.h"
#include "ops/cpu/loops.h"
#include "ops/cpu/reduced.h"

namespace cohort::kernel {

void softmax(const Tensor& out, const Tensor& in, int64_t dim, bool log) {
  COHORT_ASSERT(in.is_contiguous() && out.is_contiguous());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= in.size(d);
  for (int64_t d = dim + 1; d < in.dim(); ++d) inner *= in.size(d);
  const int64_t n = in.size(dim);
  if (in.numel() == 0) return;
  if (is_reduced_floating_point(in.dtype())) {  // computed in float32, rounded once
    const Tensor wide = widen(in);
    return into(out, [&](const Tensor& o) { softmax(o, wide, dim, log); });
  }
  dispatch_floating(in.dtype(), "softmax", [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.data_ptr<T>();
    T* y = out.data_ptr<T>();
    parallel_for(outer * inner, std::max<int64_t>(1, kParallelGrain / n), [&](int64_t begin, int64_t end) {
      for (int64_t job = begin; job < end; ++job) {
        int64_t o = job / inner, i = job % inner;
        const T* xs = x + o * n * inner + i;
        T* ys = y + o * n * inner + i;
        T m = -std::numeric_limits<T>::infinity();
        for (int64_t j = 0; j < n; ++j) m = std::max(m, xs[j * inner]);
        if (std::isinf(m) && m < 0) m = 0;  // every input -inf: keep the NaN/0 that math gives
        // exp is taken once per element and kept in y; sums accumulate in double.
        double sum = 0;
        if (log) {
          for (int64_t j = 0; j < n; ++j) sum += std::exp(xs[j * inner] - m);
          T lse = static_cast<T>(std::log(sum)) + m;
          for (int64_t j = 0; j < n; ++j) ys[j * inner] = xs[j * inner] - lse;
        } else {
          for (int64_t j = 0; j < n; ++j) {
            T e = std::exp(xs[j * inner] - m);
            ys[j * inner] = e;
            sum += e;
          }
          T inv = static_cast<T>(1.0 / sum);
          for (int64_t j = 0; j < n; ++j) ys[j * inner] *= inv;
        }
      }
    });
  });
}

}  // namespace cohort::kernel
