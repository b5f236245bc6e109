// The machine's float32 peak per core, measured: independent chains of fused multiply-adds on the
// widest vectors the CPU has (AVX-512 or AVX2), as many in flight as the FMA units can take.
// bench/compare states the sgemm target as a share of this number and prints both.
// Where the CPU has AVX512_BF16 it also measures the bfloat16 peak: the same chains of vdpbf16ps, each of
// which multiplies 32 pairs of bfloat16 and adds them into 16 float32 lanes (64 flops).
//   fma_peak        -> "fma_peak_gflops <best of 5 runs, one thread> isa <avx512|avx2>"
//                      "bf16_peak_gflops <best of 5 runs, one thread>"  (0 without AVX512_BF16)
//                      "amx_bf16_peak_gflops <best of 5 runs, one thread>"  (0 without AMX or the kernel's leave)
// On CPUs with AMX (Intel Sapphire Rapids and later) the tile unit, not vdpbf16ps, is the bfloat16 peak
// that oneDNN's bf16 matmul and convolution run against.
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
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

// The same body with vdpbf16ps: r = r + a.even * b.even + a.odd * b.odd per float32 lane.
#define COHORT_BF16_SET(x) (__m512bh) _mm512_set1_epi16(static_cast<short>(0x3f80))  // bfloat16 1.0 everywhere
#define COHORT_BF16_DOT(r, a, b) _mm512_dpbf16_ps(r, a, b)
__attribute__((target("avx512f,avx512bf16"))) double peak_bf16() {
  __m512bh a = COHORT_BF16_SET(), b = COHORT_BF16_SET();
  __m512 r0 = _mm512_set1_ps(1), r1 = r0, r2 = r0, r3 = r0, r4 = r0, r5 = r0, r6 = r0, r7 = r0, r8 = r0, r9 = r0,
         r10 = r0, r11 = r0;
  auto t0 = std::chrono::steady_clock::now();
  for (long k = 0; k < kIterations; ++k) {
    r0 = COHORT_BF16_DOT(r0, a, b), r1 = COHORT_BF16_DOT(r1, a, b), r2 = COHORT_BF16_DOT(r2, a, b);
    r3 = COHORT_BF16_DOT(r3, a, b), r4 = COHORT_BF16_DOT(r4, a, b), r5 = COHORT_BF16_DOT(r5, a, b);
    r6 = COHORT_BF16_DOT(r6, a, b), r7 = COHORT_BF16_DOT(r7, a, b), r8 = COHORT_BF16_DOT(r8, a, b);
    r9 = COHORT_BF16_DOT(r9, a, b), r10 = COHORT_BF16_DOT(r10, a, b), r11 = COHORT_BF16_DOT(r11, a, b);
    asm volatile("" : "+v"(r0), "+v"(r1), "+v"(r2), "+v"(r3), "+v"(r4), "+v"(r5));
    asm volatile("" : "+v"(r6), "+v"(r7), "+v"(r8), "+v"(r9), "+v"(r10), "+v"(r11));
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return 12.0 * 64 * kIterations / s / 1e9;
}

// Linux hands out the AMX tile state only on request (arch_prctl ARCH_REQ_XCOMP_PERM for XTILEDATA).
bool request_amx() {
  constexpr int kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

// Four independent tdpbf16ps chains on 16x16 float32 accumulator tiles, each step a 16x32 by 32x16
// bfloat16 product: 16 * 16 * 32 * 2 flops.
struct alignas(64) TileConfig {
  uint8_t palette = 1, start_row = 0, reserved[14] = {};
  uint16_t bytes_per_row[16] = {};
  uint8_t rows[16] = {};
};
__attribute__((target("amx-tile,amx-bf16"))) double peak_amx_bf16() {
  TileConfig config;
  for (int t = 0; t < 8; ++t) config.rows[t] = 16, config.bytes_per_row[t] = 64;
  _tile_loadconfig(&config);
  alignas(64) static uint16_t ones[16 * 32];
  std::fill(std::begin(ones), std::end(ones), uint16_t{0x3f80});
  _tile_loadd(6, ones, 64);
  _tile_loadd(7, ones, 64);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  constexpr long kSteps = kIterations / 4;
  auto t0 = std::chrono::steady_clock::now();
  for (long k = 0; k < kSteps; ++k) {
    _tile_dpbf16ps(0, 6, 7);
    _tile_dpbf16ps(1, 6, 7);
    _tile_dpbf16ps(2, 6, 7);
    _tile_dpbf16ps(3, 6, 7);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  _tile_release();
  return 4.0 * kSteps * 16 * 16 * 32 * 2 / s / 1e9;
}

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
  double bf16 = 0;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;  // cpuid: clang 14's __builtin_cpu_supports knows neither name
  if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) && (eax & (1u << 5)))  // AVX512_BF16
    for (int i = 0; i < 5; ++i) bf16 = std::max(bf16, peak_bf16());
  std::printf("bf16_peak_gflops %.1f\n", bf16);
  double amx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) && (edx & (1u << 22)) && request_amx())  // AMX-BF16
    for (int i = 0; i < 5; ++i) amx = std::max(amx, peak_amx_bf16());
  std::printf("amx_bf16_peak_gflops %.1f\n", amx);
}
