// The machine's float32 peak per core, measured: independent chains of fused multiply-adds on the
// widest vectors the CPU has (AVX-512 or AVX2), as many in flight as the FMA units can take.
// bench/compare states the sgemm target as a share of this number and prints both.
//   fma_peak        -> "fma_peak_gflops <best of 5 runs, one thread>"
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace {

constexpr long kIterations = 50'000'000;

// 12 independent accumulators (enough for 2 FMA units x 4 cycles of latency), written out so that
// they stay in registers; the empty asm keeps the compiler from folding the loop.
#define COHORT_FMA_PEAK_BODY(V, FMA, SET, LANES)                                                          \
  V a = SET(0.9999f), b = SET(1e-4f);                                                                    \
  V r0 = SET(1), r1 = r0, r2 = r0, r3 = r0, r4 = r0, r5 = r0, r6 = r0, r7 = r0, r8 = r0, r9 = r0, r10 = r0, \
    r11 = r0;                                                                                            \
  auto t0 = std::chrono::steady_clock::now();                                                            \
  for (long k = 0; k < kIterations; ++k) {                                                               \
    r0 = FMA(r0, a, b), r1 = FMA(r1, a, b), r2 = FMA(r2, a, b), r3 = FMA(r3, a, b);                      \
    r4 = FMA(r4, a, b), r5 = FMA(r5, a, b), r6 = FMA(r6, a, b), r7 = FMA(r7, a, b);                      \
    r8 = FMA(r8, a, b), r9 = FMA(r9, a, b), r10 = FMA(r10, a, b), r11 = FMA(r11, a, b);                  \
    asm volatile("" : "+v"(r0), "+v"(r1), "+v"(r2), "+v"(r3), "+v"(r4), "+v"(r5));                      \
    asm volatile("" : "+v"(r6), "+v"(r7), "+v"(r8), "+v"(r9), "+v"(r10), "+v"(r11));                     \
  }                                                                                                      \
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();         \
  return 12.0 * 2 * LANES * kIterations / s / 1e9;

__attribute__((target("avx512f"))) double peak512() { COHORT_FMA_PEAK_BODY(__m512, _mm512_fmadd_ps, _mm512_set1_ps, 16) }
__attribute__((target("avx2,fma"))) double peak256() { COHORT_FMA_PEAK_BODY(__m256, _mm256_fmadd_ps, _mm256_set1_ps, 8) }

}  // namespace

int main() {
  const bool avx512 = __builtin_cpu_supports("avx512f");
  if (!avx512 && !__builtin_cpu_supports("fma")) {
    std::printf("fma_peak_gflops 0 (no FMA on this CPU)\n");
    return 0;
  }
  double best = 0;
  for (int i = 0; i < 5; ++i) best = std::max(best, avx512 ? peak512() : peak256());
  std::printf("fma_peak_gflops %.1f isa %s\n", best, avx512 ? "avx512" : "avx2");
}
