// Reductions over all elements or over `dims` (negative dims count from the end; keepdim keeps the
// reduced dims with size 1). Integer and bool inputs sum to int64, as in PyTorch.
#pragma once

#include <optional>
#include <tuple>

#include "cohort/core/tensor.h"

namespace cohort {

Tensor sum(const Tensor& x, std::optional<DType> dtype = std::nullopt);
Tensor sum(const Tensor& x, IntArrayRef dims, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
Tensor mean(const Tensor& x, std::optional<DType> dtype = std::nullopt);
Tensor mean(const Tensor& x, IntArrayRef dims, bool keepdim = false, std::optional<DType> dtype = std::nullopt);
Tensor prod(const Tensor& x);

// Whether every (all) or some (any) element is non-zero (NaN counts as non-zero), over all elements
// or along dim: bool, or uint8 for a uint8 input (PyTorch's rule). all of nothing is true, any of
// nothing false. Not differentiable.
Tensor all(const Tensor& x);
Tensor all(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor any(const Tensor& x);
Tensor any(const Tensor& x, int64_t dim, bool keepdim = false);

// Largest value (NaN if any is NaN); with a dim, the values and their int64 indices.
Tensor max(const Tensor& x);
Tensor min(const Tensor& x);
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim = false);
// Like max/min but over several dims, values only; an empty dims list means all dims.
Tensor amax(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);
Tensor amin(const Tensor& x, IntArrayRef dims = {}, bool keepdim = false);
// Index of the largest value, in the flattened tensor when dim is not given.
Tensor argmax(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& x, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);

// p-norm (p = 2 by default; 1, inf and any p > 0 work).
Tensor norm(const Tensor& x, const Scalar& p = 2);
Tensor norm(const Tensor& x, const Scalar& p, IntArrayRef dims, bool keepdim = false);
// Variance and standard deviation; unbiased divides by N - 1.
// An empty dims list means all dims; the all-elements bool forms are templates so that var(x, {1})
// means dim 1, not unbiased=true.
Tensor var(const Tensor& x, IntArrayRef dims, bool unbiased = true, bool keepdim = false);
Tensor std(const Tensor& x, IntArrayRef dims, bool unbiased = true, bool keepdim = false);
inline Tensor var(const Tensor& x) { return var(x, IntArrayRef{}, true, false); }
inline Tensor std(const Tensor& x) { return std(x, IntArrayRef{}, true, false); }
template <class B, std::enable_if_t<std::is_same_v<B, bool>, int> = 0>
Tensor var(const Tensor& x, B unbiased) { return var(x, IntArrayRef{}, unbiased, false); }
template <class B, std::enable_if_t<std::is_same_v<B, bool>, int> = 0>
Tensor std(const Tensor& x, B unbiased) { return std(x, IntArrayRef{}, unbiased, false); }

// exp(x) / sum(exp(x)) along dim, computed stably; log_softmax is its log.
Tensor softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor log_softmax(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);
Tensor logsumexp(const Tensor& x, IntArrayRef dims, bool keepdim = false);

// The running sums along dim: out[..., i, ...] = x[..., 0, ...] + ... + x[..., i, ...]. Integer and
// bool inputs give int64 (PyTorch's rule) unless dtype says otherwise; x is converted to dtype first.
// Floating sums accumulate in double. A 0-d x is a lane of one. Differentiable (any order).
Tensor cumsum(const Tensor& x, int64_t dim, std::optional<DType> dtype = std::nullopt);

// Sums `grad` down to `sizes` (undoing a broadcast): used by every broadcasting op's backward.
Tensor sum_to(const Tensor& grad, IntArrayRef sizes);

}  // namespace cohort
