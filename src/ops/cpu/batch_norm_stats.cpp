// Per-channel batch statistics of a contiguous [N, C, S] tensor, in float64: the mean, then the sum
// of squared deviations from it (two passes: exact enough for float64 gradchecks, no cancellation).
// Channels are independent jobs and each channel is summed in one fixed order, so the result does
// not depend on the thread count.
#include "ops/cpu/batch_norm_kernels.h"
#include "ops/cpu/loops.h"

namespace cohort::kernel {

namespace {

// Four accumulators: independent dependency chains the CPU can overlap.
template <class T, class F>
double sum_plane(const T* p, int64_t n, F&& f) {
  double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    a0 += f(static_cast<double>(p[i])), a1 += f(static_cast<double>(p[i + 1]));
    a2 += f(static_cast<double>(p[i + 2])), a3 += f(static_cast<double>(p[i + 3]));
  }
  for (; i < n; ++i) a0 += f(static_cast<double>(p[i]));
  return (a0 + a1) + (a2 + a3);
}

}  // namespace

void batch_norm_stats(const Tensor& mean, const Tensor& m2, const Tensor& x) {
  COHORT_ASSERT(x.is_contiguous() && mean.is_contiguous() && m2.is_contiguous());
  const int64_t N = x.size(0), C = x.size(1), S = x.numel() / (N * C);
  dispatch_floating(x.dtype(), "batch_norm_stats", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_ptr<T>();
    double* pm = mean.data_ptr<double>();
    double* pv = m2.data_ptr<double>();
    parallel_for(C, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, 2 * N * S)), [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        double sum = 0;
        for (int64_t n = 0; n < N; ++n) sum += sum_plane(px + (n * C + c) * S, S, [](double v) { return v; });
        const double mu = sum / static_cast<double>(N * S);
        double sq = 0;
        for (int64_t n = 0; n < N; ++n)
          sq += sum_plane(px + (n * C + c) * S, S, [mu](double v) { return (v - mu) * (v - mu); });
        pm[c] = mu, pv[c] = sq;
      }
    });
  });
}

}  // namespace cohort::kernel
