// Gather, scatter_add and index_select kernels (int64 indices, bounds checked by the ops).
#include "cohort/autograd/grad_mode.h"
#include "ops/cpu/kernels.h"
#include "ops/cpu/loops.h"
#include "ops/cpu/reduced.h"

namespace cohort::kernel {

namespace {

// Calls f(out_offset_elems_in_a, idx_offset, src/other offset) for every element of `shape`, given
// per-tensor element strides; single-threaded (scatter_add must not race).
template <class F>
void for_each_index(IntArrayRef shape, const std::vector<std::vector<int64_t>>& strides, F&& f) {
  const int64_t nd = static_cast<int64_t>(shape.size());
  int64_t total = 1;
  for (int64_t s : shape) total *= s;
  std::vector<int64_t> idx(nd, 0);
  std::vector<int64_t> off(strides.size(), 0);
  for (int64_t e = 0; e < total; ++e) {
    f(off);
    for (int64_t d = nd - 1; d >= 0; --d) {
      ++idx[d];
      for (size_t k = 0; k < strides.size(); ++k) off[k] += strides[k][d];
      if (idx[d] < shape[d]) break;
      for (size_t k = 0; k < strides.size(); ++k) off[k] -= strides[k][d] * shape[d];
      idx[d] = 0;
    }
  }
}

std::vector<int64_t> strides_of(const Tensor& t, int64_t skip_dim = -1) {
  std::vector<int64_t> s = t.strides().vec();
  if (skip_dim >= 0) s[skip_dim] = 0;
  return s;
}

}  // namespace

void gather(const Tensor& out, const Tensor& in, int64_t dim, const Tensor& index) {
  dispatch_all(in.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.data_ptr<T>();
    const T* x = in.data_ptr<T>();
    const int64_t* ix = index.data_ptr<int64_t>();
    const int64_t dim_stride = in.stride(dim);
    for_each_index(index.sizes(), {strides_of(out), strides_of(in, dim), strides_of(index)},
                   [&](const std::vector<int64_t>& off) { o[off[0]] = x[off[1] + ix[off[2]] * dim_stride]; });
  });
}

void scatter_add(const Tensor& out, int64_t dim, const Tensor& index, const Tensor& src) {
  if (is_reduced_floating_point(out.dtype())) {  // accumulated in float32, rounded once
    const Tensor wide = widen(src);
    return into(out, [&](const Tensor& o) { scatter_add(o, dim, index, wide); }, /*initialise=*/true);
  }
  dispatch(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.data_ptr<T>();
    const T* s = src.data_ptr<T>();
    const int64_t* ix = index.data_ptr<int64_t>();
    const int64_t dim_stride = out.stride(dim);
    for_each_index(index.sizes(), {strides_of(out, dim), strides_of(src), strides_of(index)},
                   [&](const std::vector<int64_t>& off) {
                     T& dst = o[off[0] + ix[off[2]] * dim_stride];
                     dst = static_cast<T>(dst + s[off[1]]);
                   });
  });
}

void index_select(const Tensor& out, const Tensor& in, int64_t dim, const Tensor& index) {
  // out.select(dim, i) = in.select(dim, index[i]), one strided copy per index.
  NoGradGuard no_grad;  // the views below are scratch, not part of any graph
  const int64_t* ix = index.data_ptr<int64_t>();
  const int64_t n = index.numel(), index_stride = index.dim() ? index.stride(0) : 0;
  for (int64_t i = 0; i < n; ++i) copy(out.select(dim, i), in.select(dim, ix[i * index_stride]));
}

}  // namespace cohort::kernel
