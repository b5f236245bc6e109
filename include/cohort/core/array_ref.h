// ArrayRef: a non-owning view of a contiguous array (libtorch's IntArrayRef), printed as [2, 3].
#pragma once

#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <vector>

namespace cohort {

namespace detail {
// Throws cohort::Error naming the bad index or slice (out of line: error.h prints ArrayRefs).
[[noreturn]] void array_ref_index_error(size_t i, size_t size);
[[noreturn]] void array_ref_slice_error(size_t n, size_t m, size_t size);
}  // namespace detail

template <class T>
class ArrayRef {
 public:
  ArrayRef() = default;
  ArrayRef(const T& one) : data_(&one), size_(1) {}  // NOLINT
  ArrayRef(const T* data, size_t size) : data_(data), size_(size) {}
  ArrayRef(const std::vector<T>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  // Valid for the full expression the braced list appears in, as with libtorch.
  ArrayRef(std::initializer_list<T> l) : ArrayRef(l.begin(), l.size()) {}  // NOLINT

  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](size_t i) const { return data_[i]; }
  const T& at(size_t i) const {
    if (i >= size_) detail::array_ref_index_error(i, size_);
    return data_[i];
  }
  // libtorch's slice: drops the first n elements and keeps m (all the rest), as a view.
  ArrayRef slice(size_t n, size_t m) const {
    if (n > size_ || m > size_ - n) detail::array_ref_slice_error(n, m, size_);
    return ArrayRef(data_ + n, m);
  }
  ArrayRef slice(size_t n) const { return slice(n, n <= size_ ? size_ - n : size_); }
  bool equals(ArrayRef other) const { return *this == other; }
  const T& front() const { return data_[0]; }
  const T& back() const { return data_[size_ - 1]; }
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }
  operator std::vector<T>() const { return vec(); }  // NOLINT

  friend bool operator==(ArrayRef a, ArrayRef b) {
    if (a.size_ != b.size_) return false;
    for (size_t i = 0; i < a.size_; ++i)
      if (!(a.data_[i] == b.data_[i])) return false;
    return true;
  }
  friend bool operator!=(ArrayRef a, ArrayRef b) { return !(a == b); }

 private:
  const T* data_ = nullptr;
  size_t size_ = 0;
};

using IntArrayRef = ArrayRef<int64_t>;
using Shape = std::vector<int64_t>;

std::ostream& operator<<(std::ostream& os, IntArrayRef a);
inline std::ostream& operator<<(std::ostream& os, const std::vector<int64_t>& v) {
  return os << IntArrayRef(v);
}

}  // namespace cohort
