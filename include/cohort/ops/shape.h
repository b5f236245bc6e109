// Shape ops. The views share storage with their input (writes through one show in the other);
// cat, stack and repeat copy.
#pragma once

#include <vector>

#include "cohort/core/tensor.h"

namespace cohort {

Tensor view(const Tensor& x, IntArrayRef sizes);  // one size may be -1
Tensor reshape(const Tensor& x, IntArrayRef sizes);  // a view when strides allow, else a copy
Tensor permute(const Tensor& x, IntArrayRef dims);
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
Tensor t(const Tensor& x);  // transpose of a tensor with at most 2 dims
Tensor expand(const Tensor& x, IntArrayRef sizes);  // -1 keeps a size
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor slice(const Tensor& x, int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
             std::optional<int64_t> end = std::nullopt, int64_t step = 1);
Tensor select(const Tensor& x, int64_t dim, int64_t index);
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor squeeze(const Tensor& x);
Tensor squeeze(const Tensor& x, int64_t dim);
Tensor flatten(const Tensor& x, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor unflatten(const Tensor& x, int64_t dim, IntArrayRef sizes);
Tensor as_strided(const Tensor& x, IntArrayRef sizes, IntArrayRef strides, std::optional<int64_t> offset = std::nullopt);
// chunk: `chunks` pieces of ceil(n / chunks) (the last smaller; fewer pieces when n is small).
std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim = 0);
std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim = 0);
std::vector<Tensor> split_with_sizes(const Tensor& x, IntArrayRef split_sizes, int64_t dim = 0);
std::vector<Tensor> unbind(const Tensor& x, int64_t dim = 0);

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
Tensor repeat(const Tensor& x, IntArrayRef repeats);

// Copies and conversions.
// contiguous(x, format) and clone and to's memory formats: see cohort/core/memory_format.h. A clone
// or conversion keeps a channels-last layout by default (Preserve).
Tensor contiguous(const Tensor& x);
Tensor contiguous(const Tensor& x, MemoryFormat format);
Tensor clone(const Tensor& x, std::optional<MemoryFormat> memory_format = std::nullopt);
// options.memory_format_opt() asks for a layout (Preserve when unset).
Tensor to(const Tensor& x, const TensorOptions& options, bool copy = false);

// The broadcast of two shapes; throws naming `op` when they do not broadcast.
Shape broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op = "broadcast_shapes");
// dim in [-ndim, ndim) to [0, ndim); throws IndexError naming op otherwise.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

}  // namespace cohort
