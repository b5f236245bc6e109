// Element types and PyTorch's type-promotion lattice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <type_traits>
#include <utility>

#include "cohort/core/error.h"
#include "cohort/core/half.h"

namespace cohort {

// BFloat16 and Float16 come last so that the first six keep their numbers.
enum class DType : int8_t { Bool, UInt8, Int32, Int64, Float32, Float64, BFloat16, Float16 };
using ScalarType = DType;  // libtorch's name
using Dtype = DType;

inline constexpr DType kBool = DType::Bool;
inline constexpr DType kUInt8 = DType::UInt8;
inline constexpr DType kByte = DType::UInt8;
inline constexpr DType kInt32 = DType::Int32;
inline constexpr DType kInt = DType::Int32;
inline constexpr DType kInt64 = DType::Int64;
inline constexpr DType kLong = DType::Int64;
inline constexpr DType kFloat32 = DType::Float32;
inline constexpr DType kFloat = DType::Float32;
inline constexpr DType kFloat64 = DType::Float64;
inline constexpr DType kDouble = DType::Float64;
inline constexpr DType kBFloat16 = DType::BFloat16;
inline constexpr DType kFloat16 = DType::Float16;
inline constexpr DType kHalf = DType::Float16;
// libtorch's short spellings.
inline constexpr DType kU8 = DType::UInt8;
inline constexpr DType kI32 = DType::Int32;
inline constexpr DType kI64 = DType::Int64;
inline constexpr DType kF32 = DType::Float32;
inline constexpr DType kF64 = DType::Float64;
inline constexpr DType kF16 = DType::Float16;

inline constexpr int kNumDTypes = 8;

size_t element_size(DType t);
const char* dtype_name(DType t);  // "float32", "int64", "bfloat16", "float16", ...
std::ostream& operator<<(std::ostream& os, DType t);

constexpr bool is_floating_point(DType t) {
  return t == kFloat32 || t == kFloat64 || t == kBFloat16 || t == kFloat16;
}
// bfloat16 and float16: stored narrow, computed in float32 (PyTorch's is_reduced_floating_point).
constexpr bool is_reduced_floating_point(DType t) { return t == kBFloat16 || t == kFloat16; }
constexpr bool is_integral(DType t, bool include_bool = false) {
  return t == kUInt8 || t == kInt32 || t == kInt64 || (include_bool && t == kBool);
}

// The smallest dtype both a and b convert to without losing their kind (PyTorch's promote_types).
DType promote_types(DType a, DType b);
// Whether a value of `from` may be written into a tensor of `to` (no float -> int, no number -> bool).
bool can_cast(DType from, DType to);

// The process-wide default floating dtype (float32 unless changed).
DType get_default_dtype();
void set_default_dtype(DType t);

template <class T> struct dtype_of;
template <> struct dtype_of<bool> { static constexpr DType value = kBool; };
template <> struct dtype_of<uint8_t> { static constexpr DType value = kUInt8; };
template <> struct dtype_of<int32_t> { static constexpr DType value = kInt32; };
template <> struct dtype_of<int64_t> { static constexpr DType value = kInt64; };
template <> struct dtype_of<float> { static constexpr DType value = kFloat32; };
template <> struct dtype_of<double> { static constexpr DType value = kFloat64; };
template <> struct dtype_of<BFloat16> { static constexpr DType value = kBFloat16; };
template <> struct dtype_of<Half> { static constexpr DType value = kFloat16; };
template <class T> inline constexpr DType dtype_v = dtype_of<T>::value;

namespace detail {
[[noreturn]] void throw_unsupported_dtype(const char* op, DType t);
}

// Calls f with a value of the C++ type of `t`: dispatch(t, [&](auto tag) { using T = decltype(tag); ... }).
// Covers the six full-width dtypes; bfloat16 and float16 are refused with a TypeError (naming `op`
// when given), so a kernel is instantiated for them only where an op opts in with dispatch_all or
// dispatch_floating_reduced (Note [Reduced floating dtypes] in src/ops/README.md).
template <class F>
decltype(auto) dispatch(DType t, const char* op, F&& f) {
  switch (t) {
    case kBool: return f(bool{});
    case kUInt8: return f(uint8_t{});
    case kInt32: return f(int32_t{});
    case kInt64: return f(int64_t{});
    case kFloat32: return f(float{});
    case kFloat64: return f(double{});
    case kBFloat16: case kFloat16: detail::throw_unsupported_dtype(op, t);
  }
  detail::internal_assert_fail("unknown dtype", __FILE__, __LINE__);
}

template <class F>
decltype(auto) dispatch(DType t, F&& f) {
  return dispatch(t, nullptr, std::forward<F>(f));
}

// As dispatch, and bfloat16 and float16 too (f gets a BFloat16 or Half): for byte movement and
// kernels written for every dtype.
template <class F>
decltype(auto) dispatch_all(DType t, F&& f) {
  switch (t) {
    case kBFloat16: return f(BFloat16{});
    case kFloat16: return f(Half{});
    default: return dispatch(t, std::forward<F>(f));
  }
}

// As dispatch, for ops defined on float32 and float64 only; `op` names the op in the error.
template <class F>
decltype(auto) dispatch_floating(DType t, const char* op, F&& f) {
  switch (t) {
    case kFloat32: return f(float{});
    case kFloat64: return f(double{});
    case kBFloat16: case kFloat16: detail::throw_unsupported_dtype(op, t);
    default: throw TypeError(detail::str(op, ": expected a floating-point tensor (float32 or float64), got ", dtype_name(t)));
  }
}

// As dispatch_floating, and bfloat16 and float16 too.
template <class F>
decltype(auto) dispatch_floating_reduced(DType t, const char* op, F&& f) {
  switch (t) {
    case kBFloat16: return f(BFloat16{});
    case kFloat16: return f(Half{});
    default: return dispatch_floating(t, op, std::forward<F>(f));
  }
}

}  // namespace cohort
