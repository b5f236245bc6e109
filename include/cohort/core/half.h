// The reduced-precision floating element types: BFloat16 (float32's 8 exponent bits, 8 significand
// bits) and Half (IEEE binary16: 5 exponent bits, 11 significand bits). libtorch spells them
// c10::BFloat16 and c10::Half (at::Half); cohort::BFloat16 and cohort::Half behave the same way:
//   cohort::BFloat16 b = 1.1f;      // rounded to nearest, ties to even: 1.1015625
//   float f = b;                    // exact: every bfloat16 and half is a float
//   b = b * b;                      // computed in float, rounded once
//   cohort::Half h = 70000.f;       // inf: beyond half's range (max 65504)
// A value converts from float with round-to-nearest-even; NaN stays NaN (bfloat16's is 0x7FC0, as
// c10::BFloat16(NaN) gives; a half NaN keeps its sign, payload 0x200); half's subnormals (down to
// 2^-24) are rounded exactly, and what rounds beyond 65504 is inf. Arithmetic converts to float:
// two of a type give that type (rounded), one with a float gives a float, with a double a double.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

namespace cohort {

namespace detail {

inline uint32_t float_to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float bits_to_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// float -> bfloat16 bits: keep the high half, rounding the low half to nearest, ties to even.
inline uint16_t round_to_bfloat16(float f) {
  uint32_t u = float_to_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

inline float bfloat16_to_float(uint16_t h) { return bits_to_float(static_cast<uint32_t>(h) << 16); }

// float -> binary16 bits, round to nearest, ties to even.
inline uint16_t round_to_half(float f) {
  const uint32_t u = float_to_bits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return sign | 0x7e00;  // NaN
  if (a >= 0x477ff000u) return sign | 0x7c00;  // >= 65520 (halfway past 65504) and inf: inf
  if (a >= 0x38800000u) {                     // >= 2^-14: a normal half
    uint32_t m = a - (112u << 23);              // rebias the exponent from 127 to 15
    m += 0xfffu + ((m >> 13) & 1u);
    return sign | static_cast<uint16_t>(m >> 13);
  }
  // Below 2^-14: a subnormal half counts units of 2^-24, the spacing of floats in [0.5, 1), so adding
  // 0.5 rounds |f| to that unit (nearest, ties to even) and leaves the count in the low bits.
  const float rounded = bits_to_float(a) + 0.5f;
  return sign | static_cast<uint16_t>(float_to_bits(rounded) - 0x3f000000u);
}

inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return bits_to_float(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    const float v = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -v : v;
  }
  return bits_to_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

}  // namespace detail

struct alignas(2) BFloat16 {
  uint16_t x;  // the bits

  struct from_bits_t {};
  static constexpr from_bits_t from_bits() { return from_bits_t(); }

  BFloat16() = default;
  constexpr BFloat16(uint16_t bits, from_bits_t) : x(bits) {}
  BFloat16(float value) : x(detail::round_to_bfloat16(value)) {}  // NOLINT: c10's implicit conversion
  operator float() const { return detail::bfloat16_to_float(x); }  // NOLINT
};

struct alignas(2) Half {
  uint16_t x;

  struct from_bits_t {};
  static constexpr from_bits_t from_bits() { return from_bits_t(); }

  Half() = default;
  constexpr Half(uint16_t bits, from_bits_t) : x(bits) {}
  Half(float value) : x(detail::round_to_half(value)) {}  // NOLINT
  operator float() const { return detail::half_to_float(x); }  // NOLINT
};

static_assert(sizeof(BFloat16) == 2 && sizeof(Half) == 2, "bfloat16 and half are two bytes");

template <class T>
struct is_reduced_float : std::false_type {};
template <>
struct is_reduced_float<BFloat16> : std::true_type {};
template <>
struct is_reduced_float<Half> : std::true_type {};
template <class T>
inline constexpr bool is_reduced_float_v = is_reduced_float<T>::value;

namespace detail {
template <class R>
using if_reduced = std::enable_if_t<is_reduced_float_v<R>, int>;
}

// R op R -> R; R op float -> float; R op double -> double; R op integer -> R.
#define COHORT_REDUCED_FLOAT_OPERATOR(op)                                                                 \
  template <class R, detail::if_reduced<R> = 0>                                                          \
  R operator op(R a, R b) { return R(static_cast<float>(a) op static_cast<float>(b)); }                  \
  template <class R, detail::if_reduced<R> = 0>                                                          \
  float operator op(R a, float b) { return static_cast<float>(a) op b; }                                 \
  template <class R, detail::if_reduced<R> = 0>                                                          \
  float operator op(float a, R b) { return a op static_cast<float>(b); }                                 \
  template <class R, detail::if_reduced<R> = 0>                                                          \
  double operator op(R a, double b) { return static_cast<double>(static_cast<float>(a)) op b; }          \
  template <class R, detail::if_reduced<R> = 0>                                                          \
  double operator op(double a, R b) { return a op static_cast<double>(static_cast<float>(b)); }          \
  template <class R, detail::if_reduced<R> = 0>                                                          \
  R operator op(R a, int b) { return R(static_cast<float>(a) op static_cast<float>(b)); }                \
  template <class R, detail::if_reduced<R> = 0>                                                          \
  R operator op(int a, R b) { return R(static_cast<float>(a) op static_cast<float>(b)); }                \
  template <class R, detail::if_reduced<R> = 0>                                                          \
  R operator op(R a, int64_t b) { return R(static_cast<float>(a) op static_cast<float>(b)); }            \
  template <class R, detail::if_reduced<R> = 0>                                                          \
  R operator op(int64_t a, R b) { return R(static_cast<float>(a) op static_cast<float>(b)); }            \
  template <class R, detail::if_reduced<R> = 0>                                                          \
  R& operator op##=(R& a, R b) { return a = a op b; }                                                    \
  template <class R, detail::if_reduced<R> = 0>                                                          \
  R& operator op##=(R& a, float b) { return a = R(static_cast<float>(a) op b); }

COHORT_REDUCED_FLOAT_OPERATOR(+)
COHORT_REDUCED_FLOAT_OPERATOR(-)
COHORT_REDUCED_FLOAT_OPERATOR(*)
COHORT_REDUCED_FLOAT_OPERATOR(/)
#undef COHORT_REDUCED_FLOAT_OPERATOR

template <class R, detail::if_reduced<R> = 0>
R operator-(R a) {
  a.x ^= 0x8000;
  return a;
}

}  // namespace cohort

namespace std {

template <>
class numeric_limits<cohort::BFloat16> {
  using B = cohort::BFloat16;

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr int digits = 8;
  static constexpr int radix = 2;
  static constexpr B min() { return B(0x0080, B::from_bits()); }
  static constexpr B lowest() { return B(0xff7f, B::from_bits()); }
  static constexpr B max() { return B(0x7f7f, B::from_bits()); }
  static constexpr B epsilon() { return B(0x3c00, B::from_bits()); }
  static constexpr B infinity() { return B(0x7f80, B::from_bits()); }
  static constexpr B quiet_NaN() { return B(0x7fc0, B::from_bits()); }
  static constexpr B denorm_min() { return B(0x0001, B::from_bits()); }
};

template <>
class numeric_limits<cohort::Half> {
  using H = cohort::Half;

 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr int digits = 11;
  static constexpr int radix = 2;
  static constexpr H min() { return H(0x0400, H::from_bits()); }
  static constexpr H lowest() { return H(0xfbff, H::from_bits()); }
  static constexpr H max() { return H(0x7bff, H::from_bits()); }
  static constexpr H epsilon() { return H(0x1400, H::from_bits()); }
  static constexpr H infinity() { return H(0x7c00, H::from_bits()); }
  static constexpr H quiet_NaN() { return H(0x7e00, H::from_bits()); }
  static constexpr H denorm_min() { return H(0x0001, H::from_bits()); }
};

}  // namespace std
