// float32 <-> bfloat16 / float16 conversions of contiguous runs, and the helpers that let float32
// kernels serve the narrow dtypes (reduced.h).
//
// Note [Narrow conversions]
// Each conversion is a portable loop compiled per ISA (COHORT_ISA_CLONES, isa.h), and, where the CPU
// has the instruction for it, an intrinsic loop compiled for that instruction set alone and chosen
// once at run time through cpuid:
// - float -> bfloat16: AVX512_BF16's vcvtne2ps2bf16 (_mm512_cvtne2ps_pbh) rounds to nearest even,
//   but treats float32 subnormal inputs as zero, where PyTorch (and the portable loop) round them:
//   a block of 32 holding a subnormal takes the portable loop. NaN inputs are made 0x7FC00000 first,
//   so every NaN comes out 0x7FC0 whichever loop ran.
// - float <-> half: vcvtps2ph / vcvtph2ps, 16 at a time with AVX-512F, 8 with F16C, rounding to
//   nearest even with subnormals exact (MXCSR's DAZ/FTZ are off in cohort). NaN inputs are first
//   made quiet with payload 0x200 (and their sign), as the portable loop writes them.
// - bfloat16 -> float is a 16-bit shift, which the portable loop's clones vectorise.
// So the bits never depend on the CPU; tests/ops/reduced_dtype_test.cpp checks the chosen loops
// against the portable ones and both against PyTorch's conversions.
#include <cstring>

#include "cohort/core/half.h"
#include "ops/cpu/isa.h"
#include "ops/cpu/kernels.h"
#include "ops/cpu/loops.h"
#include "ops/cpu/reduced.h"
#include "ops/internal.h"

#if defined(__x86_64__) && !defined(COHORT_NO_ISA_CLONES)
#define COHORT_NARROW_INTRINSICS 1
#include <cpuid.h>
#include <immintrin.h>
// GCC 12's own _mm512_undefined_* (`__m512 __Y = __Y;`) trips -Wmaybe-uninitialized when inlined.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#endif

namespace cohort::kernel {
namespace vec {

namespace {

COHORT_ALWAYS_INLINE uint16_t bfloat16_bits(uint32_t u) {
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return (u & 0x7fffffffu) > 0x7f800000u ? uint16_t{0x7fc0} : static_cast<uint16_t>(rounded);
}

COHORT_ISA_CLONES void float_to_bfloat16_loop(uint16_t* out, const uint32_t* in, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = bfloat16_bits(in[i]);
}

COHORT_ISA_CLONES void bfloat16_to_float_loop(uint32_t* out, const uint16_t* in, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<uint32_t>(in[i]) << 16;
}

COHORT_ISA_CLONES void float_to_half_loop(uint16_t* out, const float* in, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = detail::round_to_half(in[i]);
}

COHORT_ISA_CLONES void half_to_float_loop(float* out, const uint16_t* in, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = detail::half_to_float(in[i]);
}

#ifdef COHORT_NARROW_INTRINSICS

__attribute__((target("avx512f,avx512bf16"))) void float_to_bfloat16_avx512bf16(uint16_t* out, const float* in,
                                                                                  int64_t n) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff), one = _mm512_set1_epi32(1);
  const __m512i max_subnormal = _mm512_set1_epi32(0x007ffffe);  // |u| - 1 at most this: a subnormal
  const __m512 nan = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fc00000));
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m512 lo = _mm512_loadu_ps(in + i), hi = _mm512_loadu_ps(in + i + 16);
    const __m512i alo = _mm512_and_si512(_mm512_castps_si512(lo), abs_mask);
    const __m512i ahi = _mm512_and_si512(_mm512_castps_si512(hi), abs_mask);
    const __mmask16 sub_lo = _mm512_cmple_epu32_mask(_mm512_sub_epi32(alo, one), max_subnormal);
    const __mmask16 sub_hi = _mm512_cmple_epu32_mask(_mm512_sub_epi32(ahi, one), max_subnormal);
    if (sub_lo | sub_hi) {
      float_to_bfloat16_loop(out + i, reinterpret_cast<const uint32_t*>(in + i), 32);
      continue;
    }
    lo = _mm512_mask_mov_ps(lo, _mm512_cmp_ps_mask(lo, lo, _CMP_UNORD_Q), nan);
    hi = _mm512_mask_mov_ps(hi, _mm512_cmp_ps_mask(hi, hi, _CMP_UNORD_Q), nan);
    const __m512bh packed = _mm512_cvtne2ps_pbh(hi, lo);  // lo fills the low half
    _mm512_storeu_si512(out + i, reinterpret_cast<const __m512i&>(packed));
  }
  float_to_bfloat16_loop(out + i, reinterpret_cast<const uint32_t*>(in + i), n - i);
}

// NaN lanes of x become sign | 0x7FC00000, which vcvtps2ph turns into sign | 0x7E00.
__attribute__((target("avx512f"))) inline __m512 quiet_nan_512(__m512 x) {
  const __m512i sign = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(INT32_MIN));
  const __m512 nan = _mm512_castsi512_ps(_mm512_or_si512(sign, _mm512_set1_epi32(0x7fc00000)));
  return _mm512_mask_mov_ps(x, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), nan);
}

__attribute__((target("avx2,f16c"))) inline __m256 quiet_nan_256(__m256 x) {
  const __m256i sign = _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32(INT32_MIN));
  const __m256 nan = _mm256_castsi256_ps(_mm256_or_si256(sign, _mm256_set1_epi32(0x7fc00000)));
  return _mm256_blendv_ps(x, nan, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
}

__attribute__((target("avx512f"))) void float_to_half_avx512(uint16_t* out, const float* in, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i h = _mm512_cvtps_ph(quiet_nan_512(_mm512_loadu_ps(in + i)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), h);
  }
  float_to_half_loop(out + i, in + i, n - i);
}

__attribute__((target("avx512f"))) void half_to_float_avx512(float* out, const uint16_t* in, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(out + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(in + i))));
  half_to_float_loop(out + i, in + i, n - i);
}

__attribute__((target("avx2,f16c"))) void float_to_half_f16c(uint16_t* out, const float* in, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm256_cvtps_ph(quiet_nan_256(_mm256_loadu_ps(in + i)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
  }
  float_to_half_loop(out + i, in + i, n - i);
}

__attribute__((target("avx2,f16c"))) void half_to_float_f16c(float* out, const uint16_t* in, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  half_to_float_loop(out + i, in + i, n - i);
}

#endif  // COHORT_NARROW_INTRINSICS

enum class Isa { Portable, F16c, Avx512f, Avx512Bf16 };

Isa detect_bfloat16_isa() {
#ifdef COHORT_NARROW_INTRINSICS
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16")) return Isa::Avx512Bf16;
#endif
  return Isa::Portable;
}

Isa detect_half_isa() {
#ifdef COHORT_NARROW_INTRINSICS
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return Isa::Avx512f;
  // cpuid leaf 1, ECX bit 29: F16C (clang's __builtin_cpu_supports does not know "f16c").
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & (1u << 29)) != 0;
  if (__builtin_cpu_supports("avx2") && f16c) return Isa::F16c;
#endif
  return Isa::Portable;
}

Isa bfloat16_isa() {
  static const Isa isa = detect_bfloat16_isa();
  return isa;
}

Isa half_isa() {
  static const Isa isa = detect_half_isa();
  return isa;
}

}  // namespace

void float_to_bfloat16_portable(uint16_t* out, const float* in, int64_t n) {
  float_to_bfloat16_loop(out, reinterpret_cast<const uint32_t*>(in), n);
}
void float_to_half_portable(uint16_t* out, const float* in, int64_t n) { float_to_half_loop(out, in, n); }
void half_to_float_portable(float* out, const uint16_t* in, int64_t n) { half_to_float_loop(out, in, n); }

void float_to_bfloat16(uint16_t* out, const float* in, int64_t n) {
#ifdef COHORT_NARROW_INTRINSICS
  if (bfloat16_isa() == Isa::Avx512Bf16) return float_to_bfloat16_avx512bf16(out, in, n);
#endif
  float_to_bfloat16_portable(out, in, n);
}

void bfloat16_to_float(float* out, const uint16_t* in, int64_t n) {
  bfloat16_to_float_loop(reinterpret_cast<uint32_t*>(out), in, n);
}

void float_to_half(uint16_t* out, const float* in, int64_t n) {
#ifdef COHORT_NARROW_INTRINSICS
  if (half_isa() == Isa::Avx512f) return float_to_half_avx512(out, in, n);
  if (half_isa() == Isa::F16c) return float_to_half_f16c(out, in, n);
#endif
  float_to_half_portable(out, in, n);
}

void half_to_float(float* out, const uint16_t* in, int64_t n) {
#ifdef COHORT_NARROW_INTRINSICS
  if (half_isa() == Isa::Avx512f) return half_to_float_avx512(out, in, n);
  if (half_isa() == Isa::F16c) return half_to_float_f16c(out, in, n);
#endif
  half_to_float_portable(out, in, n);
}

void narrow_to_float(float* out, const uint16_t* in, DType narrow, int64_t n) {
  if (narrow == kBFloat16) bfloat16_to_float(out, in, n);
  else half_to_float(out, in, n);
}

void float_to_narrow(uint16_t* out, const float* in, DType narrow, int64_t n) {
  if (narrow == kBFloat16) float_to_bfloat16(out, in, n);
  else float_to_half(out, in, n);
}

const char* bfloat16_conversion_isa() { return bfloat16_isa() == Isa::Avx512Bf16 ? "avx512_bf16" : "portable"; }
const char* half_conversion_isa() {
  switch (half_isa()) {
    case Isa::Avx512f: return "avx512f";
    case Isa::F16c: return "f16c";
    case Isa::Avx512Bf16: case Isa::Portable: break;
  }
  return "portable";
}

}  // namespace vec

void convert_contiguous(void* dst, DType dst_dtype, const void* src, DType src_dtype, int64_t n) {
  auto* d16 = static_cast<uint16_t*>(dst);
  const auto* s16 = static_cast<const uint16_t*>(src);
  auto* d32 = static_cast<float*>(dst);
  const auto* s32 = static_cast<const float*>(src);
  // Blocks of 64 Ki elements spread over threads; each block is independent.
  constexpr int64_t kGrain = int64_t{1} << 16;
  auto run = [&](auto&& f) { parallel_for(n, kGrain, [&](int64_t b, int64_t e) { f(b, e - b); }); };
  if (src_dtype == kFloat32 && is_reduced_floating_point(dst_dtype))
    run([&](int64_t b, int64_t m) { vec::float_to_narrow(d16 + b, s32 + b, dst_dtype, m); });
  else if (is_reduced_floating_point(src_dtype) && dst_dtype == kFloat32)
    run([&](int64_t b, int64_t m) { vec::narrow_to_float(d32 + b, s16 + b, src_dtype, m); });
  else
    COHORT_ASSERT(false && "convert_contiguous: one side must be float32, the other bfloat16 or float16");
}

Tensor float32_like(const Tensor& t) { return detail::make_empty(t.sizes(), kFloat32, t.device()); }

Tensor widen(const Tensor& t) {
  if (!is_reduced_floating_point(t.dtype())) return t;
  Tensor wide = float32_like(t);
  copy(wide, t);
  return wide;
}

}  // namespace cohort::kernel
