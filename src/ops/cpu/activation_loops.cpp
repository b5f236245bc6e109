// Per-ISA clones (Note [Kernel ISA dispatch] in isa.h) of the loops of activation_loops.h; compiled
// with -ffp-contract=off (CMakeLists.txt), so every clone rounds alike (Note [Own float exp]).
#include "ops/cpu/activation_loops.h"

#include "ops/cpu/isa.h"
#include "ops/cpu/vector_math.h"

namespace cohort::kernel::vec {

namespace {

// Restrict: the rows never overlap, and without it the vectoriser gives up on seven pointers.
template <class T>
COHORT_ALWAYS_INLINE void lstm_forward_impl(T* __restrict gates, const T* __restrict xp, const T* __restrict c_prev,
                                            T* __restrict c, T* __restrict tc, T* __restrict h, int64_t H) {
  for (int64_t j = 0; j < H; ++j) {
    const T i = vmath::sigmoid(gates[j] + xp[j]);
    const T f = vmath::sigmoid(gates[H + j] + xp[H + j]);
    const T g = vmath::tanh(gates[2 * H + j] + xp[2 * H + j]);
    const T o = vmath::sigmoid(gates[3 * H + j] + xp[3 * H + j]);
    const T cj = f * c_prev[j] + i * g;
    const T t = vmath::tanh(cj);
    gates[j] = i;
    gates[H + j] = f;
    gates[2 * H + j] = g;
    gates[3 * H + j] = o;
    c[j] = cj;
    tc[j] = t;
    h[j] = o * t;
  }
}

template <class T>
COHORT_ALWAYS_INLINE void lstm_backward_impl(const T* __restrict a, const T* __restrict tc,
                                             const T* __restrict c_prev, const T* __restrict gout,
                                             const T* __restrict dh, T* __restrict dc, T* __restrict dg, int64_t H) {
  for (int64_t j = 0; j < H; ++j) {
    const T i = a[j], f = a[H + j], g = a[2 * H + j], o = a[3 * H + j], t = tc[j];
    const T h_grad = (gout ? gout[j] : T(0)) + dh[j];
    const T c_grad = dc[j] + h_grad * o * (T(1) - t * t);
    dg[j] = c_grad * g * i * (T(1) - i);
    dg[H + j] = c_grad * c_prev[j] * f * (T(1) - f);
    dg[2 * H + j] = c_grad * i * (T(1) - g * g);
    dg[3 * H + j] = h_grad * t * o * (T(1) - o);
    dc[j] = c_grad * f;
  }
}

// The gradient of the step's output comes or not: two loops, so that neither tests it per element.
template <class T>
COHORT_ALWAYS_INLINE void lstm_backward_rows(const T* a, const T* tc, const T* c_prev, const T* gout, const T* dh,
                                             T* dc, T* dg, int64_t H) {
  if (gout)
    lstm_backward_impl(a, tc, c_prev, gout, dh, dc, dg, H);
  else
    lstm_backward_impl(a, tc, c_prev, static_cast<const T*>(nullptr), dh, dc, dg, H);
}

namespace cloned {

COHORT_ISA_CLONES void exp(float* out, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = vmath::exp(x[i]);
}
COHORT_ISA_CLONES void sigmoid(float* out, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = vmath::sigmoid(x[i]);
}
COHORT_ISA_CLONES void tanh(float* out, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = vmath::tanh(x[i]);
}
COHORT_ISA_CLONES void lstm_cell_forward(float* gates, const float* xp, const float* c_prev, float* c, float* tc,
                                         float* h, int64_t H) {
  lstm_forward_impl(gates, xp, c_prev, c, tc, h, H);
}
COHORT_ISA_CLONES void lstm_cell_forward(double* gates, const double* xp, const double* c_prev, double* c,
                                         double* tc, double* h, int64_t H) {
  lstm_forward_impl(gates, xp, c_prev, c, tc, h, H);
}
COHORT_ISA_CLONES void lstm_cell_backward(const float* a, const float* tc, const float* c_prev, const float* gout,
                                          const float* dh, float* dc, float* dg, int64_t H) {
  lstm_backward_rows(a, tc, c_prev, gout, dh, dc, dg, H);
}
COHORT_ISA_CLONES void lstm_cell_backward(const double* a, const double* tc, const double* c_prev, const double* gout,
                                          const double* dh, double* dc, double* dg, int64_t H) {
  lstm_backward_rows(a, tc, c_prev, gout, dh, dc, dg, H);
}

}  // namespace cloned
}  // namespace

void exp(float* out, const float* x, int64_t n) { cloned::exp(out, x, n); }
void sigmoid(float* out, const float* x, int64_t n) { cloned::sigmoid(out, x, n); }
void tanh(float* out, const float* x, int64_t n) { cloned::tanh(out, x, n); }
void lstm_cell_forward(float* gates, const float* xp, const float* c_prev, float* c, float* tc, float* h, int64_t H) {
  cloned::lstm_cell_forward(gates, xp, c_prev, c, tc, h, H);
}
void lstm_cell_forward(double* gates, const double* xp, const double* c_prev, double* c, double* tc, double* h,
                       int64_t H) {
  cloned::lstm_cell_forward(gates, xp, c_prev, c, tc, h, H);
}
void lstm_cell_backward(const float* gates, const float* tc, const float* c_prev, const float* gout, const float* dh,
                        float* dc, float* dg, int64_t H) {
  cloned::lstm_cell_backward(gates, tc, c_prev, gout, dh, dc, dg, H);
}
void lstm_cell_backward(const double* gates, const double* tc, const double* c_prev, const double* gout,
                        const double* dh, double* dc, double* dg, int64_t H) {
  cloned::lstm_cell_backward(gates, tc, c_prev, gout, dh, dc, dg, H);
}

}  // namespace cohort::kernel::vec
