// Element types and PyTorch's type-promotion lattice.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <type_traits>
#include <utility>

#include "cohort/core/error.h"

namespace cohort {

enum class DType : int8_t { Bool, UInt8, Int32, Int64, Float32, Float64 };
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
// libtorch's short spellings.
inline constexpr DType kU8 = DType::UInt8;
inline constexpr DType kI32 = DType::Int32;
inline constexpr DType kI64 = DType::Int64;
inline constexpr DType kF32 = DType::Float32;
inline constexpr DType kF64 = DType::Float64;

inline constexpr int kNumDTypes = 6;

size_t element_size(DType t);
const char* dtype_name(DType t);  // "float32", "int64", ...
std::ostream& operator<<(std::ostream& os, DType t);

constexpr bool is_floating_point(DType t) { return t == kFloat32 || t == kFloat64; }
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
template <class T> inline constexpr DType dtype_v = dtype_of<T>::value;

// Calls f with a value of the C++ type of `t`: dispatch(t, [&](auto tag) { using T = decltype(tag); ... }).
template <class F>
decltype(auto) dispatch(DType t, F&& f) {
  switch (t) {
    case kBool: return f(bool{});
    case kUInt8: return f(uint8_t{});
    case kInt32: return f(int32_t{});
    case kInt64: return f(int64_t{});
    case kFloat32: return f(float{});
    case kFloat64: return f(double{});
  }
  detail::internal_assert_fail("unknown dtype", __FILE__, __LINE__);
}

// As dispatch, for ops defined on float32 and float64 only; `op` names the op in the error.
template <class F>
decltype(auto) dispatch_floating(DType t, const char* op, F&& f) {
  switch (t) {
    case kFloat32: return f(float{});
    case kFloat64: return f(double{});
    default: throw TypeError(detail::str(op, ": expected a floating-point tensor (float32 or float64), got ", dtype_name(t)));
  }
}

}  // namespace cohort
