// Contiguous inner loops, each an always-inline template instantiated inside a per-ISA clone
// (Note [Kernel ISA dispatch] in isa.h). Compiled with -ffp-contract=off (CMakeLists.txt).
#include "ops/cpu/vector_loops.h"

#include <cstring>
#include <type_traits>

#include "ops/cpu/isa.h"

namespace cohort::kernel::vec {

namespace {

// G: a pointer, or one broadcast value.
template <class T, class G>
COHORT_ALWAYS_INLINE void threshold_backward_impl(T* out, G g, const T* y, T threshold, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    T gv;  // read unconditionally, so that the select needs no masked load
    if constexpr (std::is_pointer_v<G>)
      gv = g[i];
    else
      gv = g;
    out[i] = y[i] <= threshold ? T(0) : gv;  // NaN in y passes the gradient, as in PyTorch
  }
}

template <class T, class A, class B>
COHORT_ALWAYS_INLINE void where_impl(T* out, const bool* c, A a, B b, int64_t n) {
  // A/B are a pointer or one value. Both sides are read unconditionally: a conditional read is
  // control flow to the vectoriser, which then gives up.
  auto at = [](auto v, int64_t i) {
    if constexpr (std::is_pointer_v<decltype(v)>)
      return v[i];
    else
      return v;
  };
  const unsigned char* m = reinterpret_cast<const unsigned char*>(c);
  for (int64_t i = 0; i < n; ++i) {
    const T av = at(a, i), bv = at(b, i);
    out[i] = m[i] != 0 ? av : bv;
  }
}

template <class T>
COHORT_ALWAYS_INLINE void relu_impl(T* out, const T* x, int64_t n) {
  // x < 0 is false for NaN, which therefore stays NaN, and for -0, which stays -0, as in PyTorch (an
  // ordered compare and a select; a max instruction would not do: maxps returns its second operand
  // when either is NaN).
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] < T(0) ? T(0) : x[i];
}

// Per-channel sums: kLanes partial sums of T, lane j taking the elements at positions j modulo
// kLanes of each row (a row's remainder of at least kLanes / 2 goes to the first half, the rest to
// a scalar tail in double), moved into double every kFlush elements. The lanes are GCC/clang
// vectors of a fixed 64 bytes, which each ISA maps to its registers (4 SSE, 2 AVX2 or 1 AVX-512
// register per vector), so the order of the additions is fixed by N and S alone.
constexpr int64_t kLanes = 32;
constexpr int64_t kFlush = 4096;

template <class T>
struct Vec {
  typedef T type __attribute__((vector_size(64)));
  static constexpr int64_t kWidth = 64 / sizeof(T);
  static constexpr int kCount = static_cast<int>(kLanes / kWidth);
};

// One vector (U = Vec<T>::type) or one element (U = T) from p, which need not be aligned. (An
// out-parameter: a vector returned by value draws GCC's ABI warning for the baseline clone.)
template <class U, class T>
COHORT_ALWAYS_INLINE void load(U& u, const T* p) {
  std::memcpy(&u, p, sizeof(U));
}

// Sums f over the channel into out[0..K): f(p, v) with p the element offset (n, s) reads one
// U at a time (vector or scalar, see load) and writes its K terms into v.
template <int K, class T, class F>
COHORT_ALWAYS_INLINE void channel_reduce(double out[K], int64_t N, int64_t S, F f) {
  using V = typename Vec<T>::type;
  constexpr int kCount = Vec<T>::kCount;
  constexpr int64_t kWidth = Vec<T>::kWidth;
  V acc[K][kCount];
  for (int k = 0; k < K; ++k)
    for (int v = 0; v < kCount; ++v) acc[k][v] = V{};
  double total[K] = {};
  auto flush = [&] {
    for (int k = 0; k < K; ++k) {
      double sum = 0;
      for (int v = 0; v < kCount; ++v)
        for (int64_t e = 0; e < kWidth; ++e) sum += static_cast<double>(acc[k][v][e]);
      total[k] += sum;
      for (int v = 0; v < kCount; ++v) acc[k][v] = V{};
    }
  };
  int64_t pending = 0;
  for (int64_t n = 0; n < N; ++n) {
    int64_t s = 0;
    for (; s + kLanes <= S; s += kLanes)
      for (int v = 0; v < kCount; ++v) {
        V t[K];
        f(n, s + v * kWidth, t);
        for (int k = 0; k < K; ++k) acc[k][v] += t[k];
      }
    if (s + kLanes / 2 <= S) {
      for (int v = 0; v < kCount / 2; ++v) {
        V t[K];
        f(n, s + v * kWidth, t);
        for (int k = 0; k < K; ++k) acc[k][v] += t[k];
      }
      s += kLanes / 2;
    }
    for (; s < S; ++s) {
      T t[K];
      f(n, s, t);
      for (int k = 0; k < K; ++k) total[k] += static_cast<double>(t[k]);
    }
    pending += S;
    if (pending >= kFlush) flush(), pending = 0;
  }
  flush();
  for (int k = 0; k < K; ++k) out[k] = total[k];
}

template <class T>
COHORT_ALWAYS_INLINE bool max_pool_plane_2x2_impl(T* y, int64_t* idx, const T* x, int64_t P, int64_t Q,
                                                  int64_t row_stride, int64_t W) {
  // No control flow on the data, so that it vectorises where rows are long and stays branch-free
  // where they are short (the blitz CNN's 14 and 5): NaN is only counted here (a NaN compares
  // false, so it never wins below). The whole plane in one call: a call per row cost more than
  // its 5 outputs.
  int64_t nans = 0;
  for (int64_t p = 0; p < P; ++p, y += Q, idx += Q) {
    const T* r0 = x + 2 * p * row_stride;
    const T* r1 = r0 + row_stride;
    const int64_t base = 2 * p * W;
    for (int64_t q = 0; q < Q; ++q) {
      const T a = r0[2 * q], b = r0[2 * q + 1], c = r1[2 * q], d = r1[2 * q + 1];
      const T ab = a > b ? a : b, cd = c > d ? c : d, m = ab > cd ? ab : cd;
      nans += (a != a) + (b != b) + (c != c) + (d != d);
      // The first of a, b, c, d that holds m, as selects rather than a chain of branches.
      int64_t offset = W + 1;
      offset = c == m ? W : offset;
      offset = b == m ? 1 : offset;
      offset = a == m ? 0 : offset;
      y[q] = m;
      idx[q] = base + 2 * q + offset;
    }
  }
  return nans == 0;
}

template <class T>
COHORT_ALWAYS_INLINE double channel_sum_impl(const T* x, int64_t rs, int64_t N, int64_t S) {
  double out[1];
  channel_reduce<1, T>(out, N, S, [&]<class U>(int64_t n, int64_t s, U* t) { load(t[0], x + n * rs + s); });
  return out[0];
}

template <class T>
COHORT_ALWAYS_INLINE double channel_sum_sq_dev_impl(const T* x, int64_t rs, int64_t N, int64_t S, T mu) {
  double out[1];
  channel_reduce<1, T>(out, N, S, [&]<class U>(int64_t n, int64_t s, U* t) {
    U d;
    load(d, x + n * rs + s);
    d -= mu;
    t[0] = d * d;
  });
  return out[0];
}

template <class T>
COHORT_ALWAYS_INLINE void channel_sum_g_dot_impl(double sums[2], const T* g, int64_t grs, const T* x, int64_t xrs,
                                                 int64_t N, int64_t S, T mu) {
  channel_reduce<2, T>(sums, N, S, [&]<class U>(int64_t n, int64_t s, U* t) {
    U gv, xv;
    load(gv, g + n * grs + s);
    load(xv, x + n * xrs + s);
    t[0] = gv;
    t[1] = gv * (xv - mu);
  });
}

template <class T>
COHORT_ALWAYS_INLINE void channel_normalize_impl(T* y, int64_t yrs, const T* x, int64_t xrs, int64_t N, int64_t S, T mu,
                                                 T scale, T shift) {
  for (int64_t n = 0; n < N; ++n) {
    T* yr = y + n * yrs;
    const T* xr = x + n * xrs;
    for (int64_t s = 0; s < S; ++s) yr[s] = (xr[s] - mu) * scale + shift;
  }
}

template <class T>
COHORT_ALWAYS_INLINE void channel_backward_dx_impl(T* dx, int64_t drs, const T* g, int64_t grs, const T* x, int64_t xrs,
                                                   int64_t N, int64_t S, T mu, T scale, T k, T c) {
  for (int64_t n = 0; n < N; ++n) {
    T* dr = dx + n * drs;
    const T* gr = g + n * grs;
    const T* xr = x + n * xrs;
    for (int64_t s = 0; s < S; ++s) dr[s] = scale * gr[s] - k * (xr[s] - mu) - c;
  }
}

}  // namespace

// The cloned versions are internal: clang 14 names a target_clones function's dispatcher
// `<symbol>.ifunc`, so a call from another file would not link. The exported functions below
// forward to them (one more call, then a jump through the dispatcher's PLT slot).
namespace cloned {
namespace {

COHORT_ISA_CLONES void threshold_backward(float* out, const float* g, const float* y, float t, int64_t n) {
  threshold_backward_impl(out, g, y, t, n);
}
COHORT_ISA_CLONES void threshold_backward(float* out, float g, const float* y, float t, int64_t n) {
  threshold_backward_impl(out, g, y, t, n);
}
COHORT_ISA_CLONES void threshold_backward(double* out, double g, const double* y, double t, int64_t n) {
  threshold_backward_impl(out, g, y, t, n);
}
COHORT_ISA_CLONES void threshold_backward(double* out, const double* g, const double* y, double t, int64_t n) {
  threshold_backward_impl(out, g, y, t, n);
}
COHORT_ISA_CLONES void where(float* out, const bool* c, const float* a, const float* b, int64_t n) {
  where_impl(out, c, a, b, n);
}
COHORT_ISA_CLONES void where(double* out, const bool* c, const double* a, const double* b, int64_t n) {
  where_impl(out, c, a, b, n);
}
COHORT_ISA_CLONES void where(float* out, const bool* c, float a, const float* b, int64_t n) {
  where_impl(out, c, a, b, n);
}
COHORT_ISA_CLONES void where(double* out, const bool* c, double a, const double* b, int64_t n) {
  where_impl(out, c, a, b, n);
}
COHORT_ISA_CLONES void where(float* out, const bool* c, const float* a, float b, int64_t n) {
  where_impl(out, c, a, b, n);
}
COHORT_ISA_CLONES void where(double* out, const bool* c, const double* a, double b, int64_t n) {
  where_impl(out, c, a, b, n);
}
COHORT_ISA_CLONES void relu(float* out, const float* x, int64_t n) { relu_impl(out, x, n); }
COHORT_ISA_CLONES void relu(double* out, const double* x, int64_t n) { relu_impl(out, x, n); }
COHORT_ISA_CLONES bool max_pool_plane_2x2(float* y, int64_t* idx, const float* x, int64_t P, int64_t Q,
                                           int64_t row_stride, int64_t W) {
  return max_pool_plane_2x2_impl(y, idx, x, P, Q, row_stride, W);
}
COHORT_ISA_CLONES bool max_pool_plane_2x2(double* y, int64_t* idx, const double* x, int64_t P, int64_t Q,
                                           int64_t row_stride, int64_t W) {
  return max_pool_plane_2x2_impl(y, idx, x, P, Q, row_stride, W);
}
COHORT_ISA_CLONES double channel_sum(const float* x, int64_t rs, int64_t N, int64_t S) {
  return channel_sum_impl(x, rs, N, S);
}
COHORT_ISA_CLONES double channel_sum(const double* x, int64_t rs, int64_t N, int64_t S) {
  return channel_sum_impl(x, rs, N, S);
}
COHORT_ISA_CLONES double channel_sum_sq_dev(const float* x, int64_t rs, int64_t N, int64_t S, float mu) {
  return channel_sum_sq_dev_impl(x, rs, N, S, mu);
}
COHORT_ISA_CLONES double channel_sum_sq_dev(const double* x, int64_t rs, int64_t N, int64_t S, double mu) {
  return channel_sum_sq_dev_impl(x, rs, N, S, mu);
}
COHORT_ISA_CLONES void channel_sum_g_dot(double sums[2], const float* g, int64_t grs, const float* x, int64_t xrs,
                                         int64_t N, int64_t S, float mu) {
  channel_sum_g_dot_impl(sums, g, grs, x, xrs, N, S, mu);
}
COHORT_ISA_CLONES void channel_sum_g_dot(double sums[2], const double* g, int64_t grs, const double* x, int64_t xrs,
                                         int64_t N, int64_t S, double mu) {
  channel_sum_g_dot_impl(sums, g, grs, x, xrs, N, S, mu);
}
COHORT_ISA_CLONES void channel_normalize(float* y, int64_t yrs, const float* x, int64_t xrs, int64_t N, int64_t S,
                                         float mu, float scale, float shift) {
  channel_normalize_impl(y, yrs, x, xrs, N, S, mu, scale, shift);
}
COHORT_ISA_CLONES void channel_normalize(double* y, int64_t yrs, const double* x, int64_t xrs, int64_t N, int64_t S,
                                         double mu, double scale, double shift) {
  channel_normalize_impl(y, yrs, x, xrs, N, S, mu, scale, shift);
}
COHORT_ISA_CLONES void channel_backward_dx(float* dx, int64_t drs, const float* g, int64_t grs, const float* x,
                                           int64_t xrs, int64_t N, int64_t S, float mu, float scale, float k, float c) {
  channel_backward_dx_impl(dx, drs, g, grs, x, xrs, N, S, mu, scale, k, c);
}
COHORT_ISA_CLONES void channel_backward_dx(double* dx, int64_t drs, const double* g, int64_t grs, const double* x,
                                           int64_t xrs, int64_t N, int64_t S, double mu, double scale, double k,
                                           double c) {
  channel_backward_dx_impl(dx, drs, g, grs, x, xrs, N, S, mu, scale, k, c);
}

}  // namespace
}  // namespace cloned

void threshold_backward(float* out, const float* g, const float* y, float t, int64_t n) {
  cloned::threshold_backward(out, g, y, t, n);
}
void threshold_backward(double* out, const double* g, const double* y, double t, int64_t n) {
  cloned::threshold_backward(out, g, y, t, n);
}
void threshold_backward(float* out, float g, const float* y, float t, int64_t n) {
  cloned::threshold_backward(out, g, y, t, n);
}
void threshold_backward(double* out, double g, const double* y, double t, int64_t n) {
  cloned::threshold_backward(out, g, y, t, n);
}
void where(float* out, const bool* c, const float* a, const float* b, int64_t n) { cloned::where(out, c, a, b, n); }
void where(double* out, const bool* c, const double* a, const double* b, int64_t n) { cloned::where(out, c, a, b, n); }
void where(float* out, const bool* c, float a, const float* b, int64_t n) { cloned::where(out, c, a, b, n); }
void where(double* out, const bool* c, double a, const double* b, int64_t n) { cloned::where(out, c, a, b, n); }
void where(float* out, const bool* c, const float* a, float b, int64_t n) { cloned::where(out, c, a, b, n); }
void where(double* out, const bool* c, const double* a, double b, int64_t n) { cloned::where(out, c, a, b, n); }
void relu(float* out, const float* x, int64_t n) { cloned::relu(out, x, n); }
void relu(double* out, const double* x, int64_t n) { cloned::relu(out, x, n); }
double channel_sum(const float* x, int64_t rs, int64_t N, int64_t S) { return cloned::channel_sum(x, rs, N, S); }
double channel_sum(const double* x, int64_t rs, int64_t N, int64_t S) { return cloned::channel_sum(x, rs, N, S); }
double channel_sum_sq_dev(const float* x, int64_t rs, int64_t N, int64_t S, float mu) {
  return cloned::channel_sum_sq_dev(x, rs, N, S, mu);
}
double channel_sum_sq_dev(const double* x, int64_t rs, int64_t N, int64_t S, double mu) {
  return cloned::channel_sum_sq_dev(x, rs, N, S, mu);
}
void channel_sum_g_dot(double sums[2], const float* g, int64_t grs, const float* x, int64_t xrs, int64_t N, int64_t S,
                       float mu) {
  cloned::channel_sum_g_dot(sums, g, grs, x, xrs, N, S, mu);
}
void channel_sum_g_dot(double sums[2], const double* g, int64_t grs, const double* x, int64_t xrs, int64_t N, int64_t S,
                       double mu) {
  cloned::channel_sum_g_dot(sums, g, grs, x, xrs, N, S, mu);
}
void channel_normalize(float* y, int64_t yrs, const float* x, int64_t xrs, int64_t N, int64_t S, float mu, float scale,
                       float shift) {
  cloned::channel_normalize(y, yrs, x, xrs, N, S, mu, scale, shift);
}
void channel_normalize(double* y, int64_t yrs, const double* x, int64_t xrs, int64_t N, int64_t S, double mu,
                       double scale, double shift) {
  cloned::channel_normalize(y, yrs, x, xrs, N, S, mu, scale, shift);
}
void channel_backward_dx(float* dx, int64_t drs, const float* g, int64_t grs, const float* x, int64_t xrs, int64_t N,
                         int64_t S, float mu, float scale, float k, float c) {
  cloned::channel_backward_dx(dx, drs, g, grs, x, xrs, N, S, mu, scale, k, c);
}
void channel_backward_dx(double* dx, int64_t drs, const double* g, int64_t grs, const double* x, int64_t xrs, int64_t N,
                         int64_t S, double mu, double scale, double k, double c) {
  cloned::channel_backward_dx(dx, drs, g, grs, x, xrs, N, S, mu, scale, k, c);
}
bool max_pool_plane_2x2(float* y, int64_t* idx, const float* x, int64_t P, int64_t Q, int64_t row_stride, int64_t W) {
  return cloned::max_pool_plane_2x2(y, idx, x, P, Q, row_stride, W);
}
bool max_pool_plane_2x2(double* y, int64_t* idx, const double* x, int64_t P, int64_t Q, int64_t row_stride,
                        int64_t W) {
  return cloned::max_pool_plane_2x2(y, idx, x, P, Q, row_stride, W);
}

}  // namespace cohort::kernel::vec
