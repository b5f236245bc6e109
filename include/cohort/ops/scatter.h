// Writing values at indexed places: scatter, index_add, masked_scatter (scatter_add is in
// indexing.h). Each is also a Tensor method, out of place and in place (x.scatter_(1, index, src)).
//   scatter(x, 1, index, src)        // out[i][index[i][j]] = src[i][j] for dim 1
//   index_add(x, 0, index, source)   // out[index[i]] += source[i] (rows)
//   masked_scatter(x, mask, source)  // the true places of mask take source's elements in order
// Index tensors are int64; an index out of range throws IndexError naming the op.
#pragma once

#include "cohort/core/tensor.h"

namespace cohort {

// A copy of x with src[i][j] written at out[i][index[i][j]] (dim 1; likewise for any dim). index
// has x's number of dims, fits inside src and, except along dim, inside x. src must have x's
// dtype. Where an index repeats along dim, which write wins is unspecified (as in PyTorch).
// Differentiable w.r.t. x (zero where written) and src (the gradient gathered back).
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src);
// The same with one value written at every indexed place.
Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Scalar& value);
// A copy of x with alpha * source's slices added at the slices index names along dim: index is
// 1-d with one entry per slice of source along dim; source has x's shape elsewhere and x's dtype.
// Repeated indices add up.
Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha = 1);
// A copy of x whose places where the bool mask (broadcastable to x) is true take source's
// elements in row-major order; source needs at least as many elements as mask has true values,
// and x's dtype.
Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source);

}  // namespace cohort
