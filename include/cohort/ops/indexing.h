// Indexing in libtorch's spelling: x.index({Slice(), 1}), x.index({"...", None}) and
// x.index_put_({Slice(0, 2)}, 0). Integers select (drop the dim), Slices narrow, None adds a dim of
// size 1, Ellipsis stands for the dims not named; a bool or int64 tensor index gathers (copies).
#pragma once

#include <optional>

#include "cohort/core/tensor.h"

namespace cohort {

namespace indexing {

inline constexpr std::nullopt_t None = std::nullopt;
struct EllipsisIndexType {};
inline constexpr EllipsisIndexType Ellipsis;

class Slice {
 public:
  Slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,
        std::optional<int64_t> step = std::nullopt)
      : start_(start), stop_(stop), step_(step.value_or(1)) {}
  std::optional<int64_t> start() const { return start_; }
  std::optional<int64_t> stop() const { return stop_; }
  int64_t step() const { return step_; }

 private:
  std::optional<int64_t> start_, stop_;
  int64_t step_;
};

class TensorIndex {
 public:
  enum class Kind { Integer, Slice, None, Ellipsis, Tensor };
  TensorIndex(int64_t i) : kind_(Kind::Integer), integer_(i) {}  // NOLINT
  TensorIndex(int i) : kind_(Kind::Integer), integer_(i) {}  // NOLINT
  TensorIndex(Slice s) : kind_(Kind::Slice), slice_(s) {}  // NOLINT
  TensorIndex(std::nullopt_t) : kind_(Kind::None) {}  // NOLINT
  TensorIndex(EllipsisIndexType) : kind_(Kind::Ellipsis) {}  // NOLINT
  TensorIndex(const char* s);  // NOLINT: "..." only
  TensorIndex(Tensor t) : kind_(Kind::Tensor), tensor_(std::move(t)) {}  // NOLINT

  Kind kind() const { return kind_; }
  int64_t integer() const { return integer_; }
  const Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return tensor_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  Slice slice_;
  Tensor tensor_;
};

}  // namespace indexing

// Rows (or slices along dim) picked by an int64 index tensor; a copy.
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
// out[i][j] = x[index[i][j]][j] for dim 0, etc.; index has x's number of dims.
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
// A copy of x with src added at index along dim (gather's adjoint).
Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
// Elements where a bool mask (broadcastable to x) is true, as a 1-d tensor.
Tensor masked_select(const Tensor& x, const Tensor& mask);
// int64 class indices [*] -> int64 [*, num_classes] with a 1 at each index, 0 elsewhere.
// num_classes -1 means the largest index + 1. Throws for a non-int64 input, a negative index, or
// an index >= num_classes. Not differentiable (the result is integer).
Tensor one_hot(const Tensor& self, int64_t num_classes = -1);

}  // namespace cohort
