// The scatter kernel: a strided walk over index's elements. Dimension letters: none (any rank).
#include "ops/cpu/scatter_kernels.h"

#include <vector>

namespace cohort::kernel {

void scatter(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) {
  const int64_t nd = index.dim(), total = index.numel();
  if (total == 0) return;
  dispatch_all(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.data_ptr<T>();
    const T* s = src.data_ptr<T>();
    const int64_t* ix = index.data_ptr<int64_t>();
    const int64_t dim_stride = out.dim() ? out.stride(dim) : 0;
    std::vector<int64_t> pos(nd, 0);
    int64_t o_off = 0, s_off = 0, i_off = 0;  // out's offset leaves dim out: the index value gives it
    for (int64_t e = 0; e < total; ++e) {
      o[o_off + ix[i_off] * dim_stride] = s[s_off];
      for (int64_t d = nd - 1; d >= 0; --d) {
        const int64_t os = d == dim ? 0 : out.stride(d);
        if (++pos[d] < index.size(d)) {
          o_off += os, s_off += src.stride(d), i_off += index.stride(d);
          break;
        }
        o_off -= os * (index.size(d) - 1), s_off -= src.stride(d) * (index.size(d) - 1);
        i_off -= index.stride(d) * (index.size(d) - 1);
        pos[d] = 0;
      }
    }
  });
}

}  // namespace cohort::kernel
