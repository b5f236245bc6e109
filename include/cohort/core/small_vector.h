// SmallVector: a vector of trivially copyable values that keeps up to N of them inline and only
// allocates beyond that. Tensor geometry (sizes, strides) and the loop state of kernels use it: a
// std::vector there cost one malloc and free per tensor and per kernel call each, a large part of
// the time of an op on a small tensor.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

#include "cohort/core/array_ref.h"

namespace cohort {

template <class T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds trivially copyable values only");

 public:
  SmallVector() = default;
  explicit SmallVector(size_t n, T value = T()) { resize(n, value); }
  SmallVector(ArrayRef<T> values) { assign(values); }  // NOLINT: geometry converts freely
  SmallVector(std::initializer_list<T> values) { assign(ArrayRef<T>(values.begin(), values.size())); }
  SmallVector(const SmallVector& other) { assign(other); }
  SmallVector& operator=(const SmallVector& other) {
    if (this != &other) assign(other);
    return *this;
  }
  ~SmallVector() {
    if (data_ != inline_) delete[] data_;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* data() { return data_; }
  const T* data() const { return data_; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }
  operator ArrayRef<T>() const { return ArrayRef<T>(data_, size_); }  // NOLINT
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }

  void assign(ArrayRef<T> values) {
    size_ = 0;
    reserve(values.size());
    if (!values.empty()) std::memcpy(data_, values.data(), values.size() * sizeof(T));
    size_ = values.size();
  }
  void assign(size_t n, T value) {
    size_ = 0;
    resize(n, value);
  }
  void resize(size_t n, T value = T()) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data_[i] = value;
    size_ = n;
  }
  void push_back(T value) {
    if (size_ == capacity_) reserve(2 * capacity_);
    data_[size_++] = value;
  }
  void clear() { size_ = 0; }
  void reserve(size_t n) {
    if (n <= capacity_) return;
    T* bigger = new T[n];
    if (size_) std::memcpy(bigger, data_, size_ * sizeof(T));
    if (data_ != inline_) delete[] data_;
    data_ = bigger;
    capacity_ = n;
  }

 private:
  T inline_[N];
  T* data_ = inline_;
  size_t size_ = 0;
  size_t capacity_ = N;
};

}  // namespace cohort
