// Softmax and log-softmax along one dim of a contiguous tensor, as [outer, n, inner].
//
// Note [Softmax rows]
// Along the last dim of a float32 tensor (inner == 1, every attention and classifier softmax) each
// row takes a vectorised path compiled per ISA (Note [Kernel ISA dispatch] in isa.h): a max pass,
// then exp(x - max) written and summed in one pass, then the scaling. exp is the library's own on
// 16-float vectors (Note [Own float exp] in vector_math.h: within 1 ulp of exp). The sums go through 16 float lanes into double every kFlush elements; the
// file is compiled with -ffp-contract=off (CMakeLists.txt): every ISA, and every thread count (rows
// are independent), gives the same bits. Other dims and float64 keep the plain loop below (exp and
// sums in double).
//
// Note [Softmax backward]
// The gradient of softmax is gx = y (g - sum(g y)) and of log-softmax gx = g - exp(y) sum(g), per
// row. Composed of ops that is four passes and three temporaries; here it is one pass for the sum
// and one for gx per row, with the sums as in the forward (float lanes into double every kFlush
// elements) and exp(y) from the same exp. The op (softmax_backward in src/ops/softmax.cpp) records its
// own backward, so second derivatives run through it too.
#include <cmath>
#include <cstring>
#include <limits>

#include "ops/cpu/isa.h"
#include "ops/cpu/kernels.h"
#include "ops/cpu/loops.h"
#include "ops/cpu/reduced.h"
#include "ops/cpu/softmax_kernels.h"
#include "ops/cpu/vector_math.h"

namespace cohort::kernel {

namespace {

using VF = vmath::Floats16;
constexpr int64_t kWidth = 16;
constexpr int64_t kFlush = 4096;

// The helpers take and give vectors by reference: a vector passed or returned by value draws GCC's
// ABI warning in the baseline clone.

COHORT_ALWAYS_INLINE void load(VF& v, const float* p) { std::memcpy(&v, p, sizeof(VF)); }

// x = exp(x) in each lane (Note [Own float exp]).
COHORT_ALWAYS_INLINE void exp_lanes(VF& x) { vmath::exp_in_place(x); }

// The lanes' maximum and their sum (in double), each folded in halves (a fixed order).
COHORT_ALWAYS_INLINE float lane_max(const VF& v) {
  float m[kWidth];
  std::memcpy(m, &v, sizeof(VF));
  for (int64_t w = kWidth / 2; w > 0; w /= 2)
    for (int64_t e = 0; e < w; ++e) m[e] = m[e + w] > m[e] ? m[e + w] : m[e];
  return m[0];
}
COHORT_ALWAYS_INLINE double lane_sum(const VF& v) {
  double s[kWidth];
  for (int64_t e = 0; e < kWidth; ++e) s[e] = static_cast<double>(v[e]);
  for (int64_t w = kWidth / 2; w > 0; w /= 2)
    for (int64_t e = 0; e < w; ++e) s[e] += s[e + w];
  return s[0];
}

// Note [Softmax rows]: `rows` rows of n contiguous floats.
COHORT_ISA_CLONES void softmax_rows(float* y, const float* x, int64_t rows, int64_t n, bool log) {
  const float neg_inf = -std::numeric_limits<float>::infinity();
  const int64_t full = n / kWidth * kWidth, rest = n - full;
  for (int64_t row = 0; row < rows; ++row, x += n, y += n) {
    // The tail as one more vector, padded with -inf (whose exp is 0, and which never wins the max).
    VF tail = VF{} + neg_inf;
    for (int64_t e = 0; e < rest; ++e) tail[e] = x[full + e];
    VF mv = tail;
    for (int64_t j = 0; j < full; j += kWidth) {
      VF v;
      load(v, x + j);
      mv = v > mv ? v : mv;  // a NaN never wins; the row's exp gives NaN anyway
    }
    float m = lane_max(mv);
    if (std::isinf(m) && m < 0) m = 0;  // every input -inf: keep the NaN/0 that math gives
    VF acc{};
    double sum = 0;
    for (int64_t j = 0; j < full; j += kWidth) {
      VF e;
      load(e, x + j);
      e -= m;
      exp_lanes(e);
      if (!log) std::memcpy(y + j, &e, sizeof(VF));
      acc += e;
      if ((j + kWidth) % kFlush == 0) sum += lane_sum(acc), acc = VF{};
    }
    if (rest > 0) {
      tail -= m;
      exp_lanes(tail);
      acc += tail;
    }
    sum += lane_sum(acc);
    if (log) {
      const float lse = static_cast<float>(std::log(sum)) + m;
      for (int64_t j = 0; j < n; ++j) y[j] = x[j] - lse;
    } else {
      for (int64_t e = 0; e < rest; ++e) y[full + e] = tail[e];
      const float inv = static_cast<float>(1.0 / sum);
      for (int64_t j = 0; j < n; ++j) y[j] *= inv;
    }
  }
}

// Note [Softmax backward]: `rows` rows of n contiguous floats.
COHORT_ISA_CLONES void softmax_backward_rows(float* gx, const float* g, const float* y, int64_t rows, int64_t n,
                                             bool log) {
  const int64_t full = n / kWidth * kWidth;
  for (int64_t row = 0; row < rows; ++row, gx += n, g += n, y += n) {
    VF acc{};
    double sum = 0;
    for (int64_t j = 0; j < full; j += kWidth) {
      VF gv, yv;
      load(gv, g + j);
      load(yv, y + j);
      acc += log ? gv : gv * yv;
      if ((j + kWidth) % kFlush == 0) sum += lane_sum(acc), acc = VF{};
    }
    sum += lane_sum(acc);
    for (int64_t j = full; j < n; ++j) sum += log ? static_cast<double>(g[j]) : static_cast<double>(g[j]) * y[j];
    const float s = static_cast<float>(sum);
    if (log) {
      for (int64_t j = 0; j < full; j += kWidth) {
        VF gv, e;
        load(gv, g + j);
        load(e, y + j);
        exp_lanes(e);
        gv -= e * s;
        std::memcpy(gx + j, &gv, sizeof(VF));
      }
      for (int64_t j = full; j < n; ++j) gx[j] = g[j] - std::exp(y[j]) * s;
    } else {
      for (int64_t j = 0; j < full; j += kWidth) {
        VF gv, yv;
        load(gv, g + j);
        load(yv, y + j);
        gv = yv * (gv - s);
        std::memcpy(gx + j, &gv, sizeof(VF));
      }
      for (int64_t j = full; j < n; ++j) gx[j] = y[j] * (g[j] - s);
    }
  }
}

}  // namespace

void softmax_backward(const Tensor& gx, const Tensor& g, const Tensor& y, int64_t dim, bool log) {
  COHORT_ASSERT(gx.is_contiguous() && g.is_contiguous() && y.is_contiguous());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= y.size(d);
  for (int64_t d = dim + 1; d < y.dim(); ++d) inner *= y.size(d);
  const int64_t n = y.size(dim);
  if (y.numel() == 0) return;
  if (is_reduced_floating_point(y.dtype())) {  // computed in float32, rounded once
    const Tensor wg = widen(g), wy = widen(y);
    return into(gx, [&](const Tensor& o) { softmax_backward(o, wg, wy, dim, log); });
  }
  if (y.dtype() == kFloat32 && inner == 1) {  // Note [Softmax backward]
    const float* pg = g.data_ptr<float>();
    const float* py = y.data_ptr<float>();
    float* px = gx.data_ptr<float>();
    parallel_for(outer, std::max<int64_t>(1, kParallelGrain / n), [&](int64_t begin, int64_t end) {
      softmax_backward_rows(px + begin * n, pg + begin * n, py + begin * n, end - begin, n, log);
    });
    return;
  }
  dispatch_floating(y.dtype(), "softmax_backward", [&](auto tag) {
    using T = decltype(tag);
    const T* pg = g.data_ptr<T>();
    const T* py = y.data_ptr<T>();
    T* px = gx.data_ptr<T>();
    parallel_for(outer * inner, std::max<int64_t>(1, kParallelGrain / n), [&](int64_t begin, int64_t end) {
      for (int64_t job = begin; job < end; ++job) {
        const int64_t base = job / inner * n * inner + job % inner;
        const T* gs = pg + base;
        const T* ys = py + base;
        T* xs = px + base;
        double sum = 0;  // in double, as the forward's
        for (int64_t j = 0; j < n; ++j)
          sum += log ? static_cast<double>(gs[j * inner]) : static_cast<double>(gs[j * inner]) * ys[j * inner];
        const T s = static_cast<T>(sum);
        for (int64_t j = 0; j < n; ++j)
          xs[j * inner] = log ? gs[j * inner] - std::exp(ys[j * inner]) * s : ys[j * inner] * (gs[j * inner] - s);
      }
    });
  });
}

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
  if (in.dtype() == kFloat32 && inner == 1) {  // Note [Softmax rows]
    const float* x = in.data_ptr<float>();
    float* y = out.data_ptr<float>();
    parallel_for(outer, std::max<int64_t>(1, kParallelGrain / n), [&](int64_t begin, int64_t end) {
      softmax_rows(y + begin * n, x + begin * n, end - begin, n, log);
    });
    return;
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
