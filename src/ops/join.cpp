// Splitting (chunk, split, unbind: views) and joining (cat, stack, repeat: copies).
#include <cstring>
#include <functional>
#include <numeric>

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"
#include "ops/cpu/kernels.h"
#include "ops/internal.h"
#include "cohort/autograd/trace.h"

namespace cohort {

std::vector<Tensor> split_with_sizes(const Tensor& x, IntArrayRef split_sizes, int64_t dim) {
  detail::check_defined("split_with_sizes", x);
  COHORT_CHECK(x.dim() > 0, "split: cannot split a 0-d tensor");
  dim = wrap_dim(dim, x.dim(), "split_with_sizes");
  int64_t total = 0;
  for (int64_t s : split_sizes) {
    COHORT_CHECK(s >= 0, "split_with_sizes: sizes must be non-negative, got ", split_sizes);
    total += s;
  }
  COHORT_CHECK(total == x.size(dim), "split_with_sizes: expects split_sizes to sum exactly to ", x.size(dim),
               " (input tensor's size at dimension ", dim, "), but got split_sizes=", split_sizes);
  std::vector<Tensor> out;
  int64_t start = 0;
  for (int64_t s : split_sizes) {
    out.push_back(narrow(x, dim, start, s));
    start += s;
  }
  return out;
}

std::vector<Tensor> split(const Tensor& x, int64_t split_size, int64_t dim) {
  detail::check_defined("split", x);
  COHORT_CHECK(x.dim() > 0, "split: cannot split a 0-d tensor");
  COHORT_CHECK(split_size > 0 || x.size(wrap_dim(dim, x.dim(), "split")) == 0, "split: split_size must be positive, got ", split_size);
  dim = wrap_dim(dim, x.dim(), "split");
  const int64_t n = x.size(dim);
  Shape sizes;
  for (int64_t start = 0; start < n; start += split_size) sizes.push_back(std::min(split_size, n - start));
  if (sizes.empty()) sizes.push_back(0);
  return split_with_sizes(x, sizes, dim);
}

std::vector<Tensor> chunk(const Tensor& x, int64_t chunks, int64_t dim) {
  detail::check_defined("chunk", x);
  COHORT_CHECK(chunks > 0, "chunk: number of chunks must be positive, got ", chunks);
  COHORT_CHECK(x.dim() > 0, "chunk: cannot chunk a 0-d tensor");
  dim = wrap_dim(dim, x.dim(), "chunk");
  const int64_t n = x.size(dim);
  int64_t size = (n + chunks - 1) / chunks;
  if (size == 0) size = 1;
  if (n == 0) return split_with_sizes(x, Shape(static_cast<size_t>(chunks), 0), dim);
  return split(x, size, dim);
}

std::vector<Tensor> unbind(const Tensor& x, int64_t dim) {
  detail::check_defined("unbind", x);
  COHORT_CHECK(x.dim() > 0, "unbind: cannot unbind a 0-d tensor");
  dim = wrap_dim(dim, x.dim(), "unbind");
  std::vector<Tensor> out;
  for (int64_t i = 0; i < x.size(dim); ++i) out.push_back(select(x, dim, i));
  return out;
}

namespace {

// cat's and stack's copies into `out`, each part taking its size along `dim` (stacked: 1, the part
// lacking that dim). Parts that are contiguous and already of out's dtype are copied as blocks of
// bytes: a DataLoader's collate stacks a batch of small examples, where a view and a strided copy
// per part would cost more than the bytes.
void copy_parts(const Tensor& out, const std::vector<Tensor>& parts, int64_t dim, bool stacked) {
  const int64_t outer = std::accumulate(out.sizes().begin(), out.sizes().begin() + dim, int64_t{1},
                                        std::multiplies<>());
  const int64_t inner = std::accumulate(out.sizes().begin() + dim + 1, out.sizes().end(), int64_t{1},
                                        std::multiplies<>());
  const auto item = static_cast<int64_t>(element_size(out.dtype()));
  const int64_t out_row = out.size(dim) * inner * item;
  auto* dst = static_cast<char*>(out.data_ptr());
  NoGradGuard g;
  int64_t start = 0;
  for (const Tensor& t : parts) {
    const int64_t length = stacked ? 1 : t.size(dim);
    if (t.dtype() == out.dtype() && t.is_contiguous()) {
      const int64_t block = length * inner * item;
      const auto* src = static_cast<const char*>(t.data_ptr());
      for (int64_t o = 0; o < outer && block > 0; ++o)
        std::memcpy(dst + o * out_row + start * inner * item, src + o * block, static_cast<size_t>(block));
    } else {
      kernel::copy(stacked ? out.select(dim, start) : out.narrow(dim, start, length), t);
    }
    start += length;
  }
}

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim_in) {
  trace::OpScope trace("cat");
  COHORT_CHECK(!tensors.empty(), "cat: expected a non-empty list of tensors");
  // Legacy rule: 1-d empty tensors are skipped.
  std::vector<Tensor> parts;
  for (size_t i = 0; i < tensors.size(); ++i) {
    detail::check_defined("cat", tensors[i], "listed");
    if (!(tensors[i].dim() == 1 && tensors[i].numel() == 0)) parts.push_back(tensors[i]);
  }
  if (parts.empty()) return tensors[0].clone();
  const Tensor& ref = parts[0];
  COHORT_CHECK(ref.dim() > 0, "cat: zero-dimensional tensor (at position 0) cannot be concatenated");
  int64_t dim = wrap_dim(dim_in, ref.dim(), "cat");
  DType dtype = ref.dtype();
  Shape sizes = ref.sizes().vec();
  sizes[dim] = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    const Tensor& t = parts[i];
    COHORT_CHECK(t.dim() == ref.dim(), "cat: tensors must have the same number of dimensions: got ", ref.dim(),
                 " and ", t.dim(), " (shapes ", ref.sizes(), " and ", t.sizes(), " at position ", i, ")");
    for (int64_t d = 0; d < ref.dim(); ++d)
      COHORT_CHECK(d == dim || t.size(d) == ref.size(d), "cat: sizes of tensors must match except in dimension ", dim,
                   ". Expected size ", ref.size(d), " but got size ", t.size(d), " for tensor number ", i,
                   " in the list (shapes ", ref.sizes(), " and ", t.sizes(), ")");
    detail::check_same_device("cat", ref, t);
    dtype = promote_types(dtype, t.dtype());
    sizes[dim] += t.size(dim);
  }
  Tensor out = detail::make_empty(sizes, dtype, ref.device());
  Shape lengths;
  for (const Tensor& t : parts) lengths.push_back(t.size(dim));
  copy_parts(out, parts, dim, /*stacked=*/false);
  std::vector<DType> dtypes;
  for (const Tensor& t : parts) dtypes.push_back(t.dtype());
  if (trace) trace.record(parts, out, {{"dim", dim}});
  return autograd::record("CatBackward0", out, parts, [=](const Tensor& g) {
    std::vector<Tensor> grads = split_with_sizes(g, lengths, dim);
    for (size_t i = 0; i < grads.size(); ++i)
      if (grads[i].dtype() != dtypes[i]) grads[i] = grads[i].to(dtypes[i]);
    return grads;
  });
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  COHORT_CHECK(!tensors.empty(), "stack: expected a non-empty list of tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    detail::check_defined("stack", tensors[i], "listed");
    COHORT_CHECK(tensors[i].sizes() == tensors[0].sizes(), "stack: expects each tensor to be equal size, but got ",
                 tensors[0].sizes(), " at entry 0 and ", tensors[i].sizes(), " at entry ", i);
  }
  dim = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  DType dtype = tensors[0].dtype();
  for (const Tensor& t : tensors) {
    detail::check_same_device("stack", tensors[0], t);
    dtype = promote_types(dtype, t.dtype());
  }
  Shape sizes = tensors[0].sizes().vec();
  sizes.insert(sizes.begin() + dim, static_cast<int64_t>(tensors.size()));
  Tensor out = detail::make_empty(sizes, dtype, tensors[0].device());
  copy_parts(out, tensors, dim, /*stacked=*/true);
  std::vector<DType> dtypes;
  for (const Tensor& t : tensors) dtypes.push_back(t.dtype());
  return autograd::record("StackBackward0", out, tensors, [dim, dtypes](const Tensor& g) {
    std::vector<Tensor> grads = unbind(g, dim);
    for (size_t i = 0; i < grads.size(); ++i)
      if (grads[i].dtype() != dtypes[i]) grads[i] = grads[i].to(dtypes[i]);
    return grads;
  });
}

Tensor repeat(const Tensor& x, IntArrayRef repeats) {
  detail::check_defined("repeat", x);
  const int64_t nd = static_cast<int64_t>(repeats.size());
  COHORT_CHECK(nd >= x.dim(), "repeat: number of repeat dims (", nd, ") can not be smaller than number of tensor dims (",
               x.dim(), ")");
  // As a view [r0, s0, r1, s1, ...] of x expanded, then copied: the backward sums over the r dims.
  Shape padded(nd - x.dim(), 1);
  for (int64_t s : x.sizes()) padded.push_back(s);
  Tensor base = x.reshape(padded);
  Shape expanded, final_sizes;
  for (int64_t d = 0; d < nd; ++d) {
    COHORT_CHECK(repeats[d] >= 0, "repeat: repeats must be non-negative, got ", repeats);
    expanded.push_back(repeats[d]);
    expanded.push_back(padded[d]);
    final_sizes.push_back(repeats[d] * padded[d]);
  }
  Shape interleaved;
  for (int64_t d = 0; d < nd; ++d) interleaved.push_back(1), interleaved.push_back(padded[d]);
  return base.reshape(interleaved).expand(expanded).contiguous().view(final_sizes);
}

}  // namespace cohort
