// Batched matrix product with plain loops: the reference for the oneDNN path, and the kernel for
// dtypes oneDNN's matmul does not take (float64, integers). N rows, K inner, M columns.
#include "ops/cpu/kernels.h"
#include "ops/cpu/loops.h"

namespace cohort::kernel {

void bmm_reference(const Tensor& c, const Tensor& a, const Tensor& b) {
  COHORT_ASSERT(c.is_contiguous());
  const int64_t batch = c.size(0), n = c.size(1), m = c.size(2), k = a.size(2);
  dispatch(c.dtype(), "bmm", [&](auto tag) {
    using T = decltype(tag);
    using Acc = std::conditional_t<std::is_floating_point_v<T>, T, int64_t>;
    const T* pa = a.data_ptr<T>();
    const T* pb = b.data_ptr<T>();
    T* pc = c.data_ptr<T>();
    const int64_t sa0 = a.stride(0), sa1 = a.stride(1), sa2 = a.stride(2);
    const int64_t sb0 = b.stride(0), sb1 = b.stride(1), sb2 = b.stride(2);
    parallel_for(batch * n, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, k * m)),
                 [&](int64_t begin, int64_t end) {
      std::vector<Acc> row(static_cast<size_t>(m));
      for (int64_t job = begin; job < end; ++job) {
        int64_t bi = job / n, i = job % n;
        std::fill(row.begin(), row.end(), Acc(0));
        for (int64_t p = 0; p < k; ++p) {
          Acc av = static_cast<Acc>(pa[bi * sa0 + i * sa1 + p * sa2]);
          const T* brow = pb + bi * sb0 + p * sb1;
          for (int64_t j = 0; j < m; ++j) row[j] += av * static_cast<Acc>(brow[j * sb2]);
        }
        T* crow = pc + (bi * n + i) * m;
        for (int64_t j = 0; j < m; ++j) crow[j] = static_cast<T>(row[j]);
      }
    });
  });
}

}  // namespace cohort::kernel
