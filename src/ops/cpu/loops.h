// Strided loops shared by the CPU kernels.
//
// An ElementwiseLoop walks N operands of one (broadcast) shape. Dims are coalesced where every
// operand is contiguous across them, so a contiguous tensor is one flat inner loop whatever its
// rank. Kernels receive inner runs: f(ptrs, byte_strides, n), and take a fast path when the
// strides are the element size (contiguous) or 0 (a broadcast scalar). Work is split in fixed
// ranges over OpenMP threads; elementwise results do not depend on the split.
#pragma once

#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "cohort/core/small_vector.h"
#include "cohort/core/threads.h"
#include "cohort/core/tensor.h"

namespace cohort::kernel {

// Elements below which a loop stays on one thread.
inline constexpr int64_t kParallelGrain = 32768;

// Threads for a loop of `work` elements.
inline int threads_for(int64_t work, int64_t grain = kParallelGrain) {
  if (work < 2 * grain || omp_in_parallel()) return 1;
  int64_t by_work = work / grain;
  int max_threads = usable_threads();  // fewer while other processes hold cores
  return static_cast<int>(by_work < max_threads ? by_work : max_threads);
}

// Runs f(begin, end) over [0, n) split into contiguous ranges, one per thread.
template <class F>
void parallel_for(int64_t n, int64_t grain, F&& f) {
  int threads = threads_for(n, grain);
  if (threads <= 1) {
    if (n > 0) f(int64_t{0}, n);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    int t = omp_get_thread_num();
    int nt = omp_get_num_threads();
    int64_t begin = n * t / nt, end = n * (t + 1) / nt;
    if (begin < end) f(begin, end);
  }
}

// Loop state lives in SmallVectors: no allocation for up to kLoopDims dims (an op on a small tensor
// is dominated by such fixed costs).
inline constexpr size_t kLoopDims = 6;
using LoopDims = SmallVector<int64_t, kLoopDims>;

template <size_t N>
class ElementwiseLoop {
 public:
  // operands[i] must have exactly `sizes`, or broadcast to it (missing leading dims, size-1 dims).
  ElementwiseLoop(IntArrayRef sizes, const std::array<const Tensor*, N>& operands) {
    const int64_t ndim = static_cast<int64_t>(sizes.size());
    numel_ = 1;
    for (int64_t s : sizes) numel_ *= s;
    std::array<LoopDims, N> strides;
    for (size_t k = 0; k < N; ++k) {
      const Tensor& t = *operands[k];
      base_[k] = static_cast<char*>(t.data_ptr());
      int64_t es = static_cast<int64_t>(t.element_size());
      int64_t offset = ndim - t.dim();
      strides[k].assign(ndim, 0);
      for (int64_t d = 0; d < t.dim(); ++d)
        strides[k][d + offset] = t.size(d) == 1 && sizes[d + offset] != 1 ? 0 : t.stride(d) * es;
    }
    // Coalesce from the innermost dim outwards; drop size-1 dims.
    for (int64_t d = ndim - 1; d >= 0; --d) {
      if (sizes[d] == 1) continue;
      if (!sizes_.empty()) {
        bool mergeable = true;
        for (size_t k = 0; k < N; ++k)
          mergeable &= strides[k][d] == strides_[k].back() * sizes_.back();
        if (mergeable) {
          sizes_.back() *= sizes[d];
          continue;
        }
      }
      sizes_.push_back(sizes[d]);
      for (size_t k = 0; k < N; ++k) strides_[k].push_back(strides[k][d]);
    }
    if (sizes_.empty()) {
      sizes_.push_back(1);
      for (size_t k = 0; k < N; ++k) strides_[k].push_back(0);
    }
    // Stored innermost first; flip to outermost first.
    std::reverse(sizes_.begin(), sizes_.end());
    for (size_t k = 0; k < N; ++k) std::reverse(strides_[k].begin(), strides_[k].end());
  }

  int64_t numel() const { return numel_; }

  // f(std::array<char*, N>& ptrs, const std::array<int64_t, N>& inner_strides, int64_t n).
  template <class F>
  void run(F&& f, int64_t grain = kParallelGrain) const {
    if (numel_ == 0) return;
    parallel_for(numel_, grain, [&](int64_t begin, int64_t end) { run_range(begin, end, f); });
  }

  template <class F>
  void run_range(int64_t begin, int64_t end, F& f) const {
    const int64_t nd = static_cast<int64_t>(sizes_.size());
    LoopDims index(static_cast<size_t>(nd), 0);
    int64_t rest = begin;
    for (int64_t d = nd - 1; d >= 0; --d) {
      index[d] = rest % sizes_[d];
      rest /= sizes_[d];
    }
    std::array<int64_t, N> inner;
    for (size_t k = 0; k < N; ++k) inner[k] = strides_[k][nd - 1];
    int64_t pos = begin;
    while (pos < end) {
      int64_t n = std::min(sizes_[nd - 1] - index[nd - 1], end - pos);
      std::array<char*, N> ptrs;
      for (size_t k = 0; k < N; ++k) {
        char* p = base_[k];
        for (int64_t d = 0; d < nd; ++d) p += index[d] * strides_[k][d];
        ptrs[k] = p;
      }
      f(ptrs, inner, n);
      pos += n;
      index[nd - 1] += n;
      for (int64_t d = nd - 1; d > 0 && index[d] == sizes_[d]; --d) {
        index[d] = 0;
        ++index[d - 1];
      }
    }
  }

 private:
  LoopDims sizes_;
  std::array<LoopDims, N> strides_;
  std::array<char*, N> base_;
  int64_t numel_ = 0;
};

// out[i] = op(in[i]) for Out and In element types.
template <class Out, class In, class Op>
void unary_loop(const Tensor& out, const Tensor& in, Op op) {
  ElementwiseLoop<2> loop(out.sizes(), {&out, &in});
  loop.run([&](std::array<char*, 2>& p, const std::array<int64_t, 2>& s, int64_t n) {
    Out* o = reinterpret_cast<Out*>(p[0]);
    const In* a = reinterpret_cast<const In*>(p[1]);
    if (s[0] == sizeof(Out) && s[1] == sizeof(In)) {
      for (int64_t i = 0; i < n; ++i) o[i] = op(a[i]);
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out*>(p[0] + i * s[0]) = op(*reinterpret_cast<const In*>(p[1] + i * s[1]));
    }
  });
}

// out[i] = op(a[i], b[i]); fast paths for contiguous operands and a broadcast scalar on either side.
template <class Out, class A, class B, class Op>
void binary_loop(const Tensor& out, const Tensor& a, const Tensor& b, Op op) {
  ElementwiseLoop<3> loop(out.sizes(), {&out, &a, &b});
  loop.run([&](std::array<char*, 3>& p, const std::array<int64_t, 3>& s, int64_t n) {
    Out* o = reinterpret_cast<Out*>(p[0]);
    const A* x = reinterpret_cast<const A*>(p[1]);
    const B* y = reinterpret_cast<const B*>(p[2]);
    if (s[0] == sizeof(Out) && s[1] == sizeof(A) && s[2] == sizeof(B)) {
      for (int64_t i = 0; i < n; ++i) o[i] = op(x[i], y[i]);
    } else if (s[0] == sizeof(Out) && s[1] == sizeof(A) && s[2] == 0) {
      const B yv = *y;
      for (int64_t i = 0; i < n; ++i) o[i] = op(x[i], yv);
    } else if (s[0] == sizeof(Out) && s[1] == 0 && s[2] == sizeof(B)) {
      const A xv = *x;
      for (int64_t i = 0; i < n; ++i) o[i] = op(xv, y[i]);
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<Out*>(p[0] + i * s[0]) =
            op(*reinterpret_cast<const A*>(p[1] + i * s[1]), *reinterpret_cast<const B*>(p[2] + i * s[2]));
    }
  });
}

}  // namespace cohort::kernel
