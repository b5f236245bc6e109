// Ops whose result size depends on the values: nonzero and unique. Not differentiable (their
// results are indices or a selection of values with no gradient defined by PyTorch either).
//   nonzero(x)                                 // int64 [n, x.dim()]: the index of each non-zero
//   auto [v, inverse, counts] = _unique2(x, true, true, true);
#pragma once

#include <optional>
#include <tuple>

#include "cohort/core/tensor.h"

namespace cohort {

// The multi-index of every non-zero element (NaN counts as non-zero), in row-major order: int64
// of shape [n, x.dim()].
Tensor nonzero(const Tensor& x);

// The distinct values of x, 1-d and ascending (cohort sorts whether or not `sorted` is set; PyTorch
// leaves the order unspecified then); `inverse` has x's shape and holds each element's position in
// the values, `counts` how often each value occurs. A result not asked for is an empty int64
// tensor of shape [0]. bfloat16 and float16 are refused.
std::tuple<Tensor, Tensor, Tensor> _unique2(const Tensor& x, bool sorted = true, bool return_inverse = false,
                                            bool return_counts = false);
std::tuple<Tensor, Tensor> _unique(const Tensor& x, bool sorted = true, bool return_inverse = false);
// The distinct slices of x along dim, ascending in lexicographic order; inverse is [x.size(dim)],
// counts one per slice. Throws IndexError for a dim out of range.
std::tuple<Tensor, Tensor, Tensor> unique_dim(const Tensor& x, int64_t dim, bool sorted = true,
                                              bool return_inverse = false, bool return_counts = false);
// Python's torch.unique in one call: unique_dim when dim is given, _unique2 otherwise.
std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& x, bool sorted = true, bool return_inverse = false,
                                          bool return_counts = false, std::optional<int64_t> dim = std::nullopt);

}  // namespace cohort
