// Layer normalisation forward and backward as row loops: per row one pass for the mean, one for
// the variance and one for the output (the row stays in L1 between them), rows split over threads.
// M rows, N the row length.
//
// Note [Layer norm rows]
// A row's sums are taken in kLanes fixed lanes of the input's type (GCC/clang vectors of 64 bytes,
// which every ISA clone maps onto its own registers), moved into double every kFlush elements, so
// the order of the additions depends on N alone: the results are the same on every ISA (the file
// is compiled with -ffp-contract=off, see CMakeLists.txt) and for every thread count. The backward's
// column sums (the gradients of weight and bias) add the rows of fixed blocks, a block's sums kept
// apart, then add the blocks in order in double: the blocks depend on the shape only, and a thread
// takes whole blocks. The variance is two-pass (deviations from the mean): no cancellation.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "ops/cpu/isa.h"
#include "ops/cpu/kernels.h"
#include "ops/cpu/layer_norm_kernels.h"
#include "ops/cpu/loops.h"
#include "ops/cpu/reduced.h"

namespace cohort::kernel {

namespace {

constexpr int64_t kLanes = 32;
constexpr int64_t kFlush = 4096;
// The backward's row blocks: at least kBlockElements elements each, at most kMaxBlocks of them.
constexpr int64_t kBlockElements = 16384;
constexpr int64_t kMaxBlocks = 64;

template <class T>
struct Vec {
  typedef T type __attribute__((vector_size(64)));
  static constexpr int64_t kWidth = 64 / sizeof(T);
};

// One vector (U = Vec<T>::type) or one element (U = T) from p, which need not be aligned.
template <class U, class T>
COHORT_ALWAYS_INLINE void load(U& u, const T* p) {
  std::memcpy(&u, p, sizeof(U));
}

// out[k] = the sum over j in [0, N) of the K terms that f(j, t) writes into t, reading one U at j
// (a vector of Vec<T>::kWidth elements, or one element). Lane i takes the positions i modulo
// kLanes; a remainder of at least kLanes / 2 goes to the first half of the lanes, the rest is
// added in double (Note [Layer norm rows]).
template <int K, class T, class F>
COHORT_ALWAYS_INLINE void row_reduce(double out[K], int64_t N, F f) {
  using V = typename Vec<T>::type;
  constexpr int64_t kWidth = Vec<T>::kWidth;
  constexpr int kCount = static_cast<int>(kLanes / kWidth);
  V acc[K][kCount];
  for (int k = 0; k < K; ++k)
    for (int c = 0; c < kCount; ++c) acc[k][c] = V{};
  double total[K] = {};
  auto flush = [&] {
    for (int k = 0; k < K; ++k) {
      double sum = 0;
      for (int c = 0; c < kCount; ++c)
        for (int64_t e = 0; e < kWidth; ++e) sum += static_cast<double>(acc[k][c][e]);
      total[k] += sum;
      for (int c = 0; c < kCount; ++c) acc[k][c] = V{};
    }
  };
  int64_t j = 0, pending = 0;
  for (; j + kLanes <= N; j += kLanes) {
    for (int c = 0; c < kCount; ++c) {
      V t[K];
      f(j + c * kWidth, t);
      for (int k = 0; k < K; ++k) acc[k][c] += t[k];
    }
    if ((pending += kLanes) >= kFlush) flush(), pending = 0;
  }
  if (j + kLanes / 2 <= N) {
    for (int c = 0; c < kCount / 2; ++c) {
      V t[K];
      f(j + c * kWidth, t);
      for (int k = 0; k < K; ++k) acc[k][c] += t[k];
    }
    j += kLanes / 2;
  }
  flush();
  for (; j < N; ++j) {
    T t[K];
    f(j, t);
    for (int k = 0; k < K; ++k) total[k] += static_cast<double>(t[k]);
  }
  for (int k = 0; k < K; ++k) out[k] = total[k];
}

template <class T>
COHORT_ALWAYS_INLINE void forward_rows_impl(T* y, const T* x, int64_t rows, int64_t N, const T* w, const T* b,
                                            double eps, double* mean, double* rstd) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* xr = x + r * N;
    T* yr = y + r * N;
    double s[1];
    row_reduce<1, T>(s, N, [&]<class U>(int64_t j, U* t) { load(t[0], xr + j); });
    const double mu = s[0] / static_cast<double>(N);
    const T m = static_cast<T>(mu);
    row_reduce<1, T>(s, N, [&]<class U>(int64_t j, U* t) {
      U d;
      load(d, xr + j);
      d -= m;
      t[0] = d * d;
    });
    const double inv = 1.0 / std::sqrt(s[0] / static_cast<double>(N) + eps);
    mean[r] = mu, rstd[r] = inv;
    const T rs = static_cast<T>(inv);
    for (int64_t j = 0; j < N; ++j) yr[j] = (xr[j] - m) * rs * w[j] + b[j];
  }
}

// dx = rstd * (g w - mean(g w) - xhat * mean(g w xhat)), xhat = (x - mean) * rstd, per row;
// dw += g * xhat and db += g over the rows.
template <class T>
COHORT_ALWAYS_INLINE void backward_rows_impl(T* dx, T* dw, T* db, const T* g, const T* x, int64_t rows, int64_t N,
                                             const T* w, const double* mean, const double* rstd) {
  for (int64_t r = 0; r < rows; ++r) {
    const T* gr = g + r * N;
    const T* xr = x + r * N;
    const T m = static_cast<T>(mean[r]);
    const double inv = rstd[r];
    const T rs = static_cast<T>(inv);
    if (dx) {
      double s[2];  // sum of g w, sum of g w (x - mean)
      row_reduce<2, T>(s, N, [&]<class U>(int64_t j, U* t) {
        U gv, xv, wv;
        load(gv, gr + j);
        load(xv, xr + j);
        load(wv, w + j);
        t[0] = gv * wv;
        t[1] = t[0] * (xv - m);
      });
      const T a = static_cast<T>(inv * s[0] / static_cast<double>(N));
      const T c = static_cast<T>(inv * inv * inv * s[1] / static_cast<double>(N));
      T* dxr = dx + r * N;
      for (int64_t j = 0; j < N; ++j) dxr[j] = gr[j] * w[j] * rs - (xr[j] - m) * c - a;
    }
    if (dw)
      for (int64_t j = 0; j < N; ++j) dw[j] += gr[j] * ((xr[j] - m) * rs);
    if (db)
      for (int64_t j = 0; j < N; ++j) db[j] += gr[j];
  }
}

// The loops compiled per ISA (Note [Kernel ISA dispatch] in isa.h), float and double.
COHORT_ISA_CLONES void forward_rows(float* y, const float* x, int64_t rows, int64_t N, const float* w, const float* b,
                                    double eps, double* mean, double* rstd) {
  forward_rows_impl(y, x, rows, N, w, b, eps, mean, rstd);
}
COHORT_ISA_CLONES void forward_rows(double* y, const double* x, int64_t rows, int64_t N, const double* w,
                                    const double* b, double eps, double* mean, double* rstd) {
  forward_rows_impl(y, x, rows, N, w, b, eps, mean, rstd);
}
COHORT_ISA_CLONES void backward_rows(float* dx, float* dw, float* db, const float* g, const float* x, int64_t rows,
                                     int64_t N, const float* w, const double* mean, const double* rstd) {
  backward_rows_impl(dx, dw, db, g, x, rows, N, w, mean, rstd);
}
COHORT_ISA_CLONES void backward_rows(double* dx, double* dw, double* db, const double* g, const double* x,
                                     int64_t rows, int64_t N, const double* w, const double* mean, const double* rstd) {
  backward_rows_impl(dx, dw, db, g, x, rows, N, w, mean, rstd);
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// t's data, or n copies of `fill` kept in `storage` when t is undefined (no weight: ones; no bias: zeros).
template <class T>
const T* data_or(const Tensor& t, std::vector<T>& storage, int64_t n, T fill) {
  if (t.defined()) return t.data_ptr<T>();
  storage.assign(static_cast<size_t>(n), fill);
  return storage.data();
}

Tensor widen_defined(const Tensor& t) { return t.defined() ? widen(t) : Tensor(); }
Tensor float32_like_defined(const Tensor& t) { return t.defined() ? float32_like(t) : Tensor(); }

}  // namespace

void layer_norm_forward(const Tensor& y, const Tensor& mean, const Tensor& rstd, const Tensor& x,
                        const Tensor& weight, const Tensor& bias, double eps) {
  COHORT_ASSERT(y.is_contiguous() && x.is_contiguous() && mean.is_contiguous() && rstd.is_contiguous());
  if (is_reduced_floating_point(x.dtype())) {  // computed in float32, rounded once
    const Tensor wx = widen(x), ww = widen_defined(weight), wb = widen_defined(bias);
    return into(y, [&](const Tensor& out) { layer_norm_forward(out, mean, rstd, wx, ww, wb, eps); });
  }
  const int64_t M = mean.numel(), N = M > 0 ? x.numel() / M : 0;
  if (M == 0 || N == 0) return;
  dispatch_floating(x.dtype(), "layer_norm", [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> ones, zeros;
    const T* w = data_or(weight, ones, N, T(1));
    const T* b = data_or(bias, zeros, N, T(0));
    const T* px = x.data_ptr<T>();
    T* py = y.data_ptr<T>();
    double* pm = mean.data_ptr<double>();
    double* pr = rstd.data_ptr<double>();
    parallel_for(M, std::max<int64_t>(1, kParallelGrain / N), [&](int64_t begin, int64_t end) {
      forward_rows(py + begin * N, px + begin * N, end - begin, N, w, b, eps, pm + begin, pr + begin);
    });
  });
}

void layer_norm_backward(const Tensor& dx, const Tensor& dweight, const Tensor& dbias, const Tensor& dy,
                         const Tensor& x, const Tensor& weight, const Tensor& mean, const Tensor& rstd) {
  COHORT_ASSERT(dy.is_contiguous() && x.is_contiguous() && (!dx.defined() || dx.is_contiguous()) &&
                (!dweight.defined() || dweight.is_contiguous()) && (!dbias.defined() || dbias.is_contiguous()));
  if (is_reduced_floating_point(x.dtype())) {  // computed in float32, each gradient rounded once
    const Tensor fdx = float32_like_defined(dx), fdw = float32_like_defined(dweight), fdb = float32_like_defined(dbias);
    layer_norm_backward(fdx, fdw, fdb, widen(dy), widen(x), widen_defined(weight), mean, rstd);
    if (dx.defined()) copy(dx, fdx);
    if (dweight.defined()) copy(dweight, fdw);
    if (dbias.defined()) copy(dbias, fdb);
    return;
  }
  const int64_t M = mean.numel(), N = M > 0 ? x.numel() / M : 0;
  if (N == 0) return;
  dispatch_floating(x.dtype(), "layer_norm_backward", [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> ones;
    const T* w = data_or(weight, ones, N, T(1));
    const T* pg = dy.data_ptr<T>();
    const T* px = x.data_ptr<T>();
    T* pdx = dx.defined() ? dx.data_ptr<T>() : nullptr;
    const double* pm = mean.data_ptr<double>();
    const double* pr = rstd.data_ptr<double>();
    // Note [Layer norm rows]: block k's column sums are partial[k][0] (weight) and partial[k][1] (bias).
    const int64_t rows_per_block = std::max(ceil_div(kBlockElements, N), ceil_div(M, kMaxBlocks));
    const int64_t blocks = ceil_div(M, rows_per_block);
    const bool wanted_w = dweight.defined(), wanted_b = dbias.defined();
    std::vector<T> partial(wanted_w || wanted_b ? static_cast<size_t>(blocks * 2 * N) : 0, T(0));
    parallel_for(blocks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        const int64_t r0 = k * rows_per_block, rows = std::min(M, r0 + rows_per_block) - r0;
        T* dw = wanted_w ? partial.data() + (2 * k) * N : nullptr;
        T* db = wanted_b ? partial.data() + (2 * k + 1) * N : nullptr;
        backward_rows(pdx ? pdx + r0 * N : nullptr, dw, db, pg + r0 * N, px + r0 * N, rows, N, w, pm + r0, pr + r0);
      }
    });
    for (int which = 0; which < 2; ++which) {
      const Tensor& out = which == 0 ? dweight : dbias;
      if (!out.defined()) continue;
      std::vector<double> sum(static_cast<size_t>(N), 0.0);
      for (int64_t k = 0; k < blocks; ++k) {
        const T* part = partial.data() + (2 * k + which) * N;
        for (int64_t j = 0; j < N; ++j) sum[j] += static_cast<double>(part[j]);
      }
      T* po = out.data_ptr<T>();
      for (int64_t j = 0; j < N; ++j) po[j] = static_cast<T>(sum[j]);
    }
  });
}

}  // namespace cohort::kernel
