// Scalar: a number passed to an op (x + 2, clamp(x, 0.5)). Keeps whether it was a bool, an integer or
// a floating value, because type promotion depends on it (int tensor + 2 stays int, + 2.5 is float).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <type_traits>

#include "cohort/core/dtype.h"

namespace cohort {

class Scalar {
 public:
  enum class Kind : int8_t { Bool, Int, Float };

  Scalar() : Scalar(int64_t{0}) {}
  Scalar(bool v) : kind_(Kind::Bool), i_(v) {}  // NOLINT
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::Int), i_(static_cast<int64_t>(v)) {}  // NOLINT
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  Scalar(T v) : kind_(Kind::Float), d_(static_cast<double>(v)) {}  // NOLINT

  Kind kind() const { return kind_; }
  bool is_floating_point() const { return kind_ == Kind::Float; }
  bool is_integral() const { return kind_ == Kind::Int; }
  bool is_bool() const { return kind_ == Kind::Bool; }

  template <class T>
  T to() const {
    return kind_ == Kind::Float ? static_cast<T>(d_) : static_cast<T>(i_);
  }
  double to_double() const { return to<double>(); }
  int64_t to_long() const { return to<int64_t>(); }
  // libtorch's spellings.
  double toDouble() const { return to<double>(); }
  float toFloat() const { return to<float>(); }
  int64_t toLong() const { return to<int64_t>(); }
  int toInt() const { return to<int>(); }
  bool toBool() const { return to<bool>(); }
  // The dtype a tensor holding this value would have: bool, int64 or float64.
  DType dtype() const { return kind_ == Kind::Float ? kFloat64 : kind_ == Kind::Int ? kInt64 : kBool; }

 private:
  Kind kind_;
  union {
    int64_t i_;
    double d_;
  };
};

std::ostream& operator<<(std::ostream& os, const Scalar& s);

}  // namespace cohort
