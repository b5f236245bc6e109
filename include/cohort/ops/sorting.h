// Sorting along one dim, as libtorch's free functions (and Tensor methods):
//   auto [values, indices] = sort(x, /*dim=*/-1, /*descending=*/false);
//   Tensor order = argsort(x, 1, /*descending=*/true);
//   auto [top, where] = topk(logits, 5);  // the 5 largest along the last dim, largest first
// Indices are int64. The order is stable (equal elements keep their order: PyTorch's stable=true),
// and NaN sorts above every number (last ascending, first descending), as in PyTorch. values is
// gather(x, dim, indices), so gradients flow to the elements picked (any order of derivative).
// A 0-d x is a lane of one. Throws cohort::Error naming the op for a dim out of range and a k
// outside [0, size of dim].
#pragma once

#include <cstdint>
#include <tuple>

#include "cohort/core/tensor.h"

namespace cohort {

std::tuple<Tensor, Tensor> sort(const Tensor& x, int64_t dim = -1, bool descending = false);
Tensor argsort(const Tensor& x, int64_t dim = -1, bool descending = false);
// The k largest (smallest with largest=false) along dim, in sorted order (`sorted` is accepted for
// libtorch's signature; the result is always sorted).
std::tuple<Tensor, Tensor> topk(const Tensor& x, int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true);

}  // namespace cohort
