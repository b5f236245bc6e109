// Kernels that treat each 1-d lane along one dim on its own: cumulative sums, sorting and top-k.
// Inputs are contiguous (the ops make them so); a lane of [outer, n, inner] at (o, i) holds the
// elements o * n * inner + j * inner + i for j in [0, n). Lanes run in parallel; each lane's result
// does not depend on the thread count.
#pragma once

#include <cstdint>

#include "cohort/core/tensor.h"

namespace cohort::kernel {

// out = the running sums of in along dim (out contiguous, in's shape). Floating inputs accumulate in
// double and integer ones in int64, whatever out's dtype (int64 or in's floating dtype).
void cumsum(const Tensor& out, const Tensor& in, int64_t dim);

// indices (int64, contiguous, in's shape with k at dim) = the positions of the k smallest (largest
// when descending) elements of each lane, in sorted order; equal elements keep their order, and NaN
// sorts above every number, as in PyTorch.
void sort_indices(const Tensor& indices, const Tensor& in, int64_t dim, bool descending, int64_t k);

}  // namespace cohort::kernel
