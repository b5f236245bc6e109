// Factories. Each takes TensorOptions (dtype, device, requires_grad); the dtype defaults to the
// default dtype (float32) except where noted.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>

#include "cohort/core/generator.h"
#include "cohort/core/tensor.h"

namespace cohort {

// options.memory_format(MemoryFormat::ChannelsLast) lays a 4-d tensor out channels-last (every
// factory takes it); empty also takes the format as an argument, as libtorch's does.
Tensor empty(IntArrayRef sizes, const TensorOptions& options = {},
             std::optional<MemoryFormat> memory_format = std::nullopt);
Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options = {});
Tensor zeros(IntArrayRef sizes, const TensorOptions& options = {});
Tensor ones(IntArrayRef sizes, const TensorOptions& options = {});
Tensor full(IntArrayRef sizes, const Scalar& value, const TensorOptions& options = {});
Tensor eye(int64_t n, const TensorOptions& options = {});
// [start, end) in steps; int64 when every argument is an integer, else the default dtype.
Tensor arange(const Scalar& end, const TensorOptions& options = {});
Tensor arange(const Scalar& start, const Scalar& end, const TensorOptions& options);
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = 1, const TensorOptions& options = {});
Tensor linspace(double start, double end, int64_t steps, const TensorOptions& options = {});

// Uniform on [0, 1), standard normal, and integers in [low, high) (int64 by default).
Tensor rand(IntArrayRef sizes, const TensorOptions& options = {});
Tensor randn(IntArrayRef sizes, const TensorOptions& options = {});
Tensor randint(int64_t high, IntArrayRef sizes, const TensorOptions& options = {});
Tensor randint(int64_t low, int64_t high, IntArrayRef sizes, const TensorOptions& options = {});
Tensor randperm(int64_t n, const TensorOptions& options = {});
// Category indices (int64) drawn from the weights in each row of input ([n] or [rows, n]; finite,
// non-negative, not all 0; they need not sum to 1): [num_samples] or [rows, num_samples]. Without
// replacement a category is drawn at most once (so num_samples <= its non-zero categories). One
// draw from the generator per call, like every random tensor here.
Tensor multinomial(const Tensor& input, int64_t num_samples, bool replacement = false);
Tensor multinomial(const Tensor& input, int64_t num_samples, bool replacement, Generator& gen);
Tensor rand(IntArrayRef sizes, Generator& gen, const TensorOptions& options = {});
Tensor randn(IntArrayRef sizes, Generator& gen, const TensorOptions& options = {});

// The *_like factories keep t's channels-last layout unless options ask for another memory format.
Tensor empty_like(const Tensor& t, const TensorOptions& options = {});
Tensor zeros_like(const Tensor& t, const TensorOptions& options = {});
Tensor ones_like(const Tensor& t, const TensorOptions& options = {});
Tensor full_like(const Tensor& t, const Scalar& value, const TensorOptions& options = {});
Tensor rand_like(const Tensor& t, const TensorOptions& options = {});
Tensor randn_like(const Tensor& t, const TensorOptions& options = {});
Tensor randint_like(const Tensor& t, int64_t low, int64_t high, const TensorOptions& options = {});

// A tensor holding a copy of nested braced values: tensor({{1, 2}, {3, 4}}). Integer literals give
// int64, floating literals the default dtype, bools bool (PyTorch's inference); options override.
class NestedValues;
Tensor tensor(const NestedValues& values, const TensorOptions& options = {});
namespace detail {
Tensor tensor_1d(const void* data, int64_t n, DType source, const TensorOptions& options);
}
// A 1-d copy of values; the dtype is T's unless options say otherwise.
template <class T>
Tensor tensor(ArrayRef<T> values, const TensorOptions& options = {}) {
  return detail::tensor_1d(values.data(), static_cast<int64_t>(values.size()), dtype_v<T>, options);
}
template <class T>
Tensor tensor(const std::vector<T>& values, const TensorOptions& options = {}) {
  return tensor(ArrayRef<T>(values), options);
}
Tensor scalar_tensor(const Scalar& value, const TensorOptions& options = {});

// Wraps memory the caller owns, without copying (the "NumPy bridge"): writes through either side
// are visible to the other. The memory must outlive the tensor, unless `deleter` frees it.
Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, const TensorOptions& options = {});
Tensor from_blob(void* data, IntArrayRef sizes, std::function<void(void*)> deleter,
                 const TensorOptions& options = {});

// Nested braced values for tensor(); each level is a list of values or of lists.
class NestedValues {
 public:
  NestedValues(double v) : scalar_(v), kind_(Scalar::Kind::Float) {}  // NOLINT
  NestedValues(float v) : scalar_(v), kind_(Scalar::Kind::Float) {}  // NOLINT
  NestedValues(int v) : scalar_(static_cast<double>(v)), kind_(Scalar::Kind::Int) {}  // NOLINT
  NestedValues(int64_t v) : scalar_(static_cast<double>(v)), kind_(Scalar::Kind::Int) {}  // NOLINT
  NestedValues(bool v) : scalar_(v), kind_(Scalar::Kind::Bool) {}  // NOLINT
  NestedValues(std::initializer_list<NestedValues> l) : children_(l), is_list_(true) {}  // NOLINT

  bool is_list() const { return is_list_; }
  double scalar() const { return scalar_; }
  Scalar::Kind kind() const { return kind_; }
  const std::vector<NestedValues>& children() const { return children_; }

 private:
  double scalar_ = 0;
  Scalar::Kind kind_ = Scalar::Kind::Int;
  std::vector<NestedValues> children_;
  bool is_list_ = false;
};

}  // namespace cohort
