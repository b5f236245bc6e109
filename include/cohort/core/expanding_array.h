// ExpandingArray<D>: D integers given as one value (expanded to all D) or as a list of exactly D, as
// libtorch's torch::ExpandingArray. Used for kernel sizes, strides, paddings and dilations:
//   nn::Conv2dOptions(3, 6, 5)          // kernel_size (5, 5)
//   nn::Conv2dOptions(3, 6, {3, 5})     // kernel_size (3, 5)
// Prints as a Python tuple, "(5, 5)" or "(3,)", as PyTorch's module reprs do.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <vector>

#include "cohort/core/array_ref.h"
#include "cohort/core/error.h"

namespace cohort {

template <size_t D>
class ExpandingArray {
 public:
  ExpandingArray(int64_t value) { values_.fill(value); }  // NOLINT: 5 means (5, 5)
  ExpandingArray(std::initializer_list<int64_t> list) : ExpandingArray(IntArrayRef(list)) {}  // NOLINT
  ExpandingArray(const std::vector<int64_t>& list) : ExpandingArray(IntArrayRef(list)) {}  // NOLINT
  ExpandingArray(const std::array<int64_t, D>& values) : values_(values) {}  // NOLINT
  explicit ExpandingArray(IntArrayRef list) {
    COHORT_CHECK(list.size() == D, "ExpandingArray: expected ", D, " values, got ", list.size(), " (", list, ")");
    for (size_t i = 0; i < D; ++i) values_[i] = list[i];
  }

  int64_t& operator[](size_t i) { return values_[i]; }
  const int64_t& operator[](size_t i) const { return values_[i]; }
  std::array<int64_t, D>& operator*() { return values_; }
  const std::array<int64_t, D>& operator*() const { return values_; }
  const int64_t* begin() const { return values_.data(); }
  const int64_t* end() const { return values_.data() + D; }
  static constexpr size_t size() { return D; }
  operator IntArrayRef() const { return IntArrayRef(values_.data(), D); }  // NOLINT
  // True when every entry equals v (PyTorch's repr hides paddings of 0 and dilations of 1).
  bool all_equal(int64_t v) const {
    for (int64_t x : values_)
      if (x != v) return false;
    return true;
  }

  friend bool operator==(const ExpandingArray& a, const ExpandingArray& b) { return a.values_ == b.values_; }
  friend std::ostream& operator<<(std::ostream& os, const ExpandingArray& a) {
    os << "(";
    for (size_t i = 0; i < D; ++i) os << (i ? ", " : "") << a.values_[i];
    return os << (D == 1 ? ",)" : ")");
  }

 private:
  std::array<int64_t, D> values_{};
};

}  // namespace cohort
