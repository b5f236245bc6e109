// The fused SGD update (Note [Fused SGD step] in src/ops/sgd_step.cpp): one branch-free loop per
// combination of options, inside per-ISA clones (Note [Kernel ISA dispatch] in isa.h). Compiled with
// -ffp-contract=off (CMakeLists.txt), so that a * b + c rounds twice on every ISA, as the composed
// ops do.
#include "ops/cpu/optimizer_kernels.h"

#include "ops/cpu/isa.h"
#include "ops/cpu/loops.h"

namespace cohort::kernel {

namespace {

// One variant per combination of options, so that the inner loop has no branch and vectorises: in
// a long run, momentum buffers of parameters whose gradient stays 0 decay through the denormal
// numbers, and each instruction that makes one costs a microcode assist (scalar code was 2x slower
// than the composed ops, SSE's 4 lanes no faster than them).
template <class T, bool kDecay, bool kMomentum, bool kFirst, bool kNesterov>
COHORT_ALWAYS_INLINE void step_loop(T* __restrict p, const T* __restrict grad, T* __restrict buf, int64_t n,
                                    const SgdStep& o) {
  const T wd = static_cast<T>(o.weight_decay), m = static_cast<T>(o.momentum);
  const T keep = static_cast<T>(1 - o.dampening), step = static_cast<T>(-o.lr);
  for (int64_t i = 0; i < n; ++i) {
    T d = grad[i];
    if constexpr (kDecay) d = d + wd * p[i];
    if constexpr (kMomentum) {
      const T b = kFirst ? d : buf[i] * m + keep * d;
      buf[i] = b;
      d = kNesterov ? d + m * b : b;
    }
    p[i] = p[i] + step * d;
  }
}

template <class T, bool kDecay, bool kMomentum, bool kFirst>
COHORT_ALWAYS_INLINE void step_nesterov(T* p, const T* grad, T* buf, int64_t n, const SgdStep& o) {
  if (o.nesterov)
    step_loop<T, kDecay, kMomentum, kFirst, true>(p, grad, buf, n, o);
  else
    step_loop<T, kDecay, kMomentum, kFirst, false>(p, grad, buf, n, o);
}

template <class T>
COHORT_ALWAYS_INLINE void step_any(T* p, const T* grad, T* buf, int64_t n, const SgdStep& o) {
  const bool decay = o.weight_decay != 0;
  if (!buf) {
    if (decay) return step_loop<T, true, false, false, false>(p, grad, buf, n, o);
    return step_loop<T, false, false, false, false>(p, grad, buf, n, o);
  }
  if (o.first) {
    if (decay) return step_nesterov<T, true, true, true>(p, grad, buf, n, o);
    return step_nesterov<T, false, true, true>(p, grad, buf, n, o);
  }
  if (decay) return step_nesterov<T, true, true, false>(p, grad, buf, n, o);
  return step_nesterov<T, false, true, false>(p, grad, buf, n, o);
}

COHORT_ISA_CLONES void step_block(float* p, const float* grad, float* buf, int64_t n, const SgdStep& o) {
  step_any(p, grad, buf, n, o);
}
COHORT_ISA_CLONES void step_block(double* p, const double* grad, double* buf, int64_t n, const SgdStep& o) {
  step_any(p, grad, buf, n, o);
}

template <class T>
void step_parallel(T* p, const T* grad, T* buf, int64_t n, const SgdStep& o) {
  parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
    step_block(p + begin, grad + begin, buf ? buf + begin : nullptr, end - begin, o);
  });
}

}  // namespace

void sgd_step(float* p, const float* grad, float* buf, int64_t n, const SgdStep& o) { step_parallel(p, grad, buf, n, o); }
void sgd_step(double* p, const double* grad, double* buf, int64_t n, const SgdStep& o) {
  step_parallel(p, grad, buf, n, o);
}

}  // namespace cohort::kernel
