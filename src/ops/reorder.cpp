// flip, roll and repeat_interleave: each is an index_select per dim with a computed index. flip and
// roll record their own node, whose backward is the inverse reordering (again differentiable);
// repeat_interleave keeps index_select's node, whose backward sums the repeats (as PyTorch's does).
// unfold is a strided view whose backward adds each window's gradient back with index_add.
#include "cohort/ops/reorder.h"

#include <algorithm>
#include <vector>

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/indexing.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/scatter.h"
#include "cohort/ops/shape.h"
#include "ops/internal.h"

namespace cohort {

namespace {

Tensor index_tensor(const std::vector<int64_t>& v, Device device) {
  return tensor(ArrayRef<int64_t>(v), TensorOptions(kInt64).device(device));
}

// dims wrapped into [0, ndim), each at most once.
Shape wrap_dims(const char* op, IntArrayRef dims, int64_t ndim) {
  Shape out;
  for (int64_t d : dims) {
    int64_t w = wrap_dim(d, std::max<int64_t>(ndim, 1), op);
    COHORT_CHECK(std::find(out.begin(), out.end(), w) == out.end(), op, ": dim ", w,
                 " appears multiple times in the list of dims ", dims);
    out.push_back(w);
  }
  return out;
}

// Selects index_of(i, n) for i in [0, n) along each dim, without recording.
template <class F>
Tensor reindex(const Tensor& x, const Shape& dims, F index_of) {
  NoGradGuard no_grad;
  if (x.dim() == 0) return x.clone();
  Tensor out = x;
  for (size_t k = 0; k < dims.size(); ++k) {
    const int64_t n = x.size(dims[k]);
    std::vector<int64_t> idx(n);
    for (int64_t i = 0; i < n; ++i) idx[i] = index_of(k, i, n);
    out = index_select(out, dims[k], index_tensor(idx, x.device()));
  }
  return out.is_same(x) ? x.clone() : out;
}

// The 1-d int64 index that repeats position i counts[i] times.
Tensor repeated_positions(const std::vector<int64_t>& counts, Device device) {
  std::vector<int64_t> idx;
  for (size_t i = 0; i < counts.size(); ++i) idx.insert(idx.end(), counts[i], static_cast<int64_t>(i));
  return index_tensor(idx, device);
}

std::vector<int64_t> counts_of(const char* op, const Tensor& repeats, int64_t n) {
  COHORT_CHECK_AS(TypeError, repeats.dtype() == kInt64 || repeats.dtype() == kInt32, op,
                  ": expected an integer repeats tensor, got ", repeats.dtype());
  COHORT_CHECK(repeats.dim() <= 1, op, ": repeats must be 0-d or 1-d, got shape ", repeats.sizes());
  Tensor r = repeats.to(kInt64).reshape({-1}).contiguous();
  COHORT_CHECK(r.numel() == 1 || r.numel() == n, op, ": repeats must have the same size as input along dim (", n,
               ") or one value, got ", r.numel());
  const int64_t* p = r.data_ptr<int64_t>();
  std::vector<int64_t> counts(n);
  for (int64_t i = 0; i < n; ++i) {
    counts[i] = p[r.numel() == 1 ? 0 : i];
    COHORT_CHECK(counts[i] >= 0, op, ": repeats can not be negative, got ", counts[i]);
  }
  return counts;
}

Tensor interleave(const Tensor& x, const std::vector<int64_t>& counts, int64_t dim,
                  std::optional<int64_t> output_size) {
  Tensor idx = repeated_positions(counts, x.device());
  COHORT_CHECK(!output_size || *output_size == idx.numel(), "repeat_interleave: output_size ", *output_size,
               " does not match the repeated length ", idx.numel());
  return index_select(x, dim, idx);
}

}  // namespace

Tensor flip(const Tensor& x, IntArrayRef dims_in) {
  detail::check_defined("flip", x);
  Shape dims = wrap_dims("flip", dims_in, x.dim());
  Tensor out = reindex(x, dims, [](size_t, int64_t i, int64_t n) { return n - 1 - i; });
  return autograd::record("FlipBackward0", out, {x}, [dims](const Tensor& g) { return std::vector<Tensor>{flip(g, dims)}; });
}

Tensor roll(const Tensor& x, IntArrayRef shifts_in, IntArrayRef dims_in) {
  detail::check_defined("roll", x);
  if (dims_in.empty()) {
    COHORT_CHECK(shifts_in.size() == 1, "roll: without dims, shifts must have one value, got ", shifts_in);
    return roll(x.flatten(), shifts_in, {0}).view(x.sizes());
  }
  COHORT_CHECK(shifts_in.size() == dims_in.size(), "roll: shifts and dims must have the same length, got shifts ",
               shifts_in, " and dims ", dims_in);
  Shape dims = wrap_dims("roll", dims_in, x.dim());
  Shape shifts = shifts_in.vec();
  Tensor out = reindex(x, dims, [&](size_t k, int64_t i, int64_t n) { return (((i - shifts[k]) % n) + n) % n; });
  Shape back(shifts.size());
  for (size_t k = 0; k < shifts.size(); ++k) back[k] = -shifts[k];
  return autograd::record("RollBackward0", out, {x}, [back, dims](const Tensor& g) {
    return std::vector<Tensor>{roll(g, back, dims)};
  });
}

Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  detail::check_defined("repeat_interleave", x);
  COHORT_CHECK(repeats >= 0, "repeat_interleave: repeats can not be negative, got ", repeats);
  Tensor in = dim ? x : x.reshape({-1});
  int64_t d = dim ? wrap_dim(*dim, std::max<int64_t>(x.dim(), 1), "repeat_interleave") : 0;
  if (in.dim() == 0) in = in.reshape({1});
  return interleave(in, std::vector<int64_t>(in.size(d), repeats), d, output_size);
}

Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<int64_t> dim,
                         std::optional<int64_t> output_size) {
  detail::check_defined("repeat_interleave", x);
  Tensor in = dim ? x : x.reshape({-1});
  int64_t d = dim ? wrap_dim(*dim, std::max<int64_t>(x.dim(), 1), "repeat_interleave") : 0;
  if (in.dim() == 0) in = in.reshape({1});
  return interleave(in, counts_of("repeat_interleave", repeats, in.size(d)), d, output_size);
}

Tensor repeat_interleave(const Tensor& repeats, std::optional<int64_t> output_size) {
  detail::check_defined("repeat_interleave", repeats, "repeats");
  COHORT_CHECK(repeats.dim() == 1, "repeat_interleave: repeats must be 1-d, got shape ", repeats.sizes());
  Tensor idx = repeated_positions(counts_of("repeat_interleave", repeats, repeats.numel()), repeats.device());
  COHORT_CHECK(!output_size || *output_size == idx.numel(), "repeat_interleave: output_size ", *output_size,
               " does not match the repeated length ", idx.numel());
  return idx;
}

Tensor unfold(const Tensor& x, int64_t dim, int64_t size, int64_t step) {
  detail::check_defined("unfold", x);
  if (x.dim() == 0) return unfold(x.reshape({1}), 0, size, step).squeeze(0);  // PyTorch: 0-d acts as [1]
  const int64_t d = wrap_dim(dim, x.dim(), "unfold");
  const int64_t len = x.size(d);
  COHORT_CHECK(size >= 0 && size <= len, "unfold: maximum size for tensor at dimension ", d, " is ", len,
               " but size is ", size);
  COHORT_CHECK(step > 0, "unfold: step must be positive, got ", step);
  const int64_t windows = (len - size) / step + 1;
  Shape sizes = x.sizes().vec(), strides = x.strides().vec();
  sizes[d] = windows;
  strides[d] = x.stride(d) * step;
  sizes.push_back(size);
  strides.push_back(x.stride(d));
  Shape in_sizes = x.sizes().vec();
  Tensor out = detail::make_view(x, sizes, strides, x.storage_offset());
  return autograd::record("UnfoldBackward0", out, {x}, [=](const Tensor& g) {
    // Element j of window w came from position w * step + j; where windows overlap, gradients add.
    std::vector<int64_t> from;
    for (int64_t w = 0; w < windows; ++w)
      for (int64_t j = 0; j < size; ++j) from.push_back(w * step + j);
    Shape perm;  // the window dim moved next to dim, then the two merged
    for (int64_t k = 0; k < g.dim() - 1; ++k) {
      perm.push_back(k);
      if (k == d) perm.push_back(g.dim() - 1);
    }
    Tensor flat = g.permute(perm).flatten(d, d + 1);
    return std::vector<Tensor>{index_add(zeros(in_sizes, g.options()), d, index_tensor(from, g.device()), flat)};
  });
}

}  // namespace cohort
