// exp, sigmoid and tanh for float that a compiler vectorises: branch-free, no library calls, to be
// inlined into the per-ISA clones (Note [Kernel ISA dispatch] in isa.h). exp also on explicit
// 16-float vectors, for the softmax rows (softmax.cpp): one exp for the whole library.
//
// Note [Own float exp]
// libm's expf and tanhf are scalar calls: in an LSTM layer's cell loops they took 12% of a training
// step, and sigmoid and tanh are the heart of every recurrent model. SLEEF (Debian's libsleef-dev,
// PyTorch's choice) would vectorise them, but its AVX2 and AVX-512 versions contract a*b+c into
// FMAs that its SSE2 version cannot, so the same input gives results that differ in the last bit
// from one CPU to another. These are written once as plain float arithmetic, compiled with
// -ffp-contract=off like the rest of the cloned loops: every ISA rounds every step alike, so a
// model trains to the same bits on an AVX2 and an AVX-512 machine. Accuracy (tests/ops/
// vector_math_test.cpp checks it against double over the whole range): exp within 1 ulp, tanh
// within 1.5 and sigmoid within 3 (libm's expf and tanhf: within 1). float64 keeps libm: it is what gradcheck differentiates, and no hot loop
// runs in it.
//
// The methods are the classic ones (Cody and Waite's range reduction, minimax polynomials on the
// reduced interval): exp(x) = 2^n exp(r) with n = round(x / ln 2) and |r| <= ln 2 / 2, 2^n built in
// the exponent bits as two factors so that results down to the subnormals and up to overflow come
// out right; tanh(x) an odd polynomial below |x| = 0.625 and 1 - 2 / (exp(2|x|) + 1) above.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "ops/cpu/isa.h"

namespace cohort::kernel::vmath {

// 16 float lanes and their int32 counterpart, GCC vectors that every ISA maps to its registers (the
// softmax rows compute on these).
typedef float Floats16 __attribute__((vector_size(64)));
typedef int32_t Ints16 __attribute__((vector_size(64)));

// The int32 lanes of a float type, and conversions that take and give vectors by reference (a vector
// passed or returned by value draws GCC's ABI warning in the baseline clone).
template <class F>
struct IntLanes {
  using type = int32_t;
};
template <>
struct IntLanes<Floats16> {
  using type = Ints16;
};
COHORT_ALWAYS_INLINE void to_int32(int32_t& i, float x) { i = static_cast<int32_t>(x); }
COHORT_ALWAYS_INLINE void to_int32(Ints16& i, const Floats16& x) { i = __builtin_convertvector(x, Ints16); }
COHORT_ALWAYS_INLINE void from_bits(float& f, int32_t bits) { f = std::bit_cast<float>(bits); }
COHORT_ALWAYS_INLINE void from_bits(Floats16& f, const Ints16& bits) { std::memcpy(&f, &bits, sizeof(f)); }

// x = exp(x), for a float or for each lane of Floats16 (taken by reference, as above). NaN stays NaN, infinities give 0 and infinity.
// Inputs below -104 (exp underflows past the subnormals) are computed as exp(0) and then zeroed, not
// carried through subnormal products: an operation with a subnormal result takes a microcode assist
// on many x86 CPUs, which made a causally masked softmax (its -inf scores) four times slower.
template <class F>
COHORT_ALWAYS_INLINE void exp_in_place(F& x) {
  const F zero{}, lo = zero - 104.f, hi = zero + 89.f, shifter = zero + 12582912.f;
  const auto nan = x != x;
  const auto vanishes = x < lo;
  F v = nan ? zero : x;  // NaN takes no part in the arithmetic (its conversion to int is undefined)
  v = vanishes ? zero : v;
  v = v > hi ? hi : v;  // exp(89) already overflows; the clamp keeps n's conversion in range
  // n = round(v / ln 2), by adding and removing 1.5 * 2^23 (round to nearest even; |v / ln 2| < 2^22).
  const F n = (v * 1.44269504088896341f + shifter) - shifter;
  // r = v - n ln 2 in two steps: ln 2's high part has few enough bits that n * hi is exact.
  F r = v - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  // exp(r) - 1 - r on |r| <= ln 2 / 2.
  F p = zero + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const F e = p * (r * r) + r + 1.f;
  // 2^n as 2^a * 2^b, each a normal float for n in [-151, 129], so that the last product rounds once
  // into the subnormals or overflows to infinity as exp does.
  typename IntLanes<F>::type ni;
  to_int32(ni, n);
  const auto a = ni >> 1, b = ni - a;
  F sa, sb;
  from_bits(sa, (a + 127) << 23);
  from_bits(sb, (b + 127) << 23);
  F y = e * sa * sb;
  y = vanishes ? zero : y;
  x = nan ? x : y;
}

// exp(x) for float.
COHORT_ALWAYS_INLINE float exp(float x) {
  exp_in_place(x);
  return x;
}

// 1 / (1 + exp(-x)), computed from e = exp(-|x|) as 1 / (1 + e) or e / (1 + e): for x below -88.7,
// exp(-x) would overflow and round the result (still a normal float down to -87.3) to 0.
COHORT_ALWAYS_INLINE float sigmoid(float x) {
  const float e = exp(x < 0.f ? x : -x);
  const float s = 1.f / (1.f + e);
  return x < 0.f ? e * s : s;
}

// tanh(x), odd: tanh(-0) is -0.
COHORT_ALWAYS_INLINE float tanh(float x) {
  const float a = x < 0.f ? -x : x;
  // |x| < 0.625: x + x^3 P(x^2).
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * x + x;
  // Above: 1 - 2 / (exp(2|x|) + 1), its sign restored (exp(2|x|) = infinity gives exactly 1).
  const float big = 1.f - 2.f / (exp(2.f * a) + 1.f);
  const float large = x < 0.f ? -big : big;
  // x + x^3 P(x^2) would turn -0 into +0.
  return a < 0.625f ? (a == 0.f ? x : small) : (x != x ? x : large);
}

// float64: libm (Note [Own float exp]).
COHORT_ALWAYS_INLINE double exp(double x) { return std::exp(x); }
COHORT_ALWAYS_INLINE double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
COHORT_ALWAYS_INLINE double tanh(double x) { return std::tanh(x); }

}  // namespace cohort::kernel::vmath
