// View ops: new geometry over the same storage, each with the backward that undoes it.
#include "cohort/ops/shape.h"

#include <algorithm>
#include <numeric>

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/indexing.h"
#include "cohort/ops/reduction.h"
#include "ops/internal.h"
#include "cohort/autograd/trace.h"

namespace cohort {

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  COHORT_CHECK_AS(IndexError, dim >= -ndim && dim < ndim, op, ": dimension out of range (expected to be in range of [",
                  -ndim, ", ", ndim - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + ndim : dim;
}

Shape broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    COHORT_CHECK(x == y || x == 1 || y == 1, op, ": cannot broadcast ", a, " with ", b, " (size ", x, " vs ", y,
                 " at dim ", i, ")");
    out[i] = x == 1 ? y : x;
  }
  return out;
}

namespace {

// Resolves one -1 in `sizes` against numel.
Shape infer_size(IntArrayRef sizes, int64_t numel, const char* op, IntArrayRef from) {
  Shape out = sizes.vec();
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      COHORT_CHECK(infer < 0, op, ": only one dimension can be inferred, got ", sizes);
      infer = static_cast<int64_t>(i);
    } else {
      COHORT_CHECK(out[i] >= 0, op, ": invalid size ", out[i], " in ", sizes);
      known *= out[i];
    }
  }
  if (infer >= 0) {
    COHORT_CHECK(known != 0 && numel % known == 0, op, ": shape ", sizes, " is invalid for input of size ", numel,
                 " (shape ", from, ")");
    out[infer] = numel / known;
  } else {
    COHORT_CHECK(known == numel, op, ": shape ", sizes, " is invalid for input of size ", numel, " (shape ", from, ")");
  }
  return out;
}

// Strides for viewing (sizes, strides) as new_sizes without a copy, if possible (PyTorch's rule:
// each run of merged input dims must be contiguous within itself).
std::optional<Shape> view_strides(IntArrayRef sizes, IntArrayRef strides, IntArrayRef new_sizes) {
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  Shape out(new_sizes.size());
  if (numel == 0) return contiguous_strides(new_sizes);
  int64_t view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = strides.empty() ? 1 : strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= sizes[d];
    if (d == 0 || (sizes[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d] == 1)) {
        out[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) {
    for (; view_d >= 0; --view_d) {
      if (new_sizes[view_d] != 1) return std::nullopt;
      out[view_d] = 1;
    }
  }
  return out;
}

// The gradient of a slice or select: zeros of the input's sizes with g written where the view was
// (`place` makes that view of the zeros). It is linear in g, so its own gradient is the same view
// of the incoming one: under create_graph the backward is differentiable again.
template <class Place>
Tensor scatter_into_zeros(const char* name, const Tensor& g, const Shape& in_sizes, Place place) {
  Tensor gi = zeros(in_sizes, g.options());
  {
    NoGradGuard no_grad;  // written in place without a graph; the node below is its graph
    place(gi).copy_(g);
  }
  return autograd::record(name, gi, {g}, [place](const Tensor& gg) { return std::vector<Tensor>{place(gg)}; });
}

// A view that records how to send its gradient back.
template <class F>
Tensor record_view(const char* name, const Tensor& x, Shape sizes, Shape strides, int64_t offset, F backward) {
  Tensor out = detail::make_view(x, std::move(sizes), std::move(strides), offset);
  return autograd::record(name, out, {x}, std::move(backward));
}

}  // namespace

Tensor view(const Tensor& x, IntArrayRef sizes_in) {
  trace::OpScope trace("reshape");
  detail::check_defined("view", x);
  Shape sizes = infer_size(sizes_in, x.numel(), "view", x.sizes());
  auto strides = view_strides(x.sizes(), x.strides(), sizes);
  COHORT_CHECK(strides.has_value(), "view: size ", IntArrayRef(sizes), " is not compatible with input of shape ",
               x.sizes(), " and strides ", x.strides(), " (at least one dimension spans across two contiguous subspaces); "
               "hint: use .reshape(...) instead");
  Shape in_sizes = x.sizes().vec();
  Tensor out = record_view("ViewBackward0", x, sizes, *strides, x.storage_offset(),
                           [in_sizes](const Tensor& g) { return std::vector<Tensor>{g.reshape(in_sizes)}; });
  if (trace) trace.record({x}, out, {{"shape", trace::ints(sizes_in)}});
  return out;
}

Tensor reshape(const Tensor& x, IntArrayRef sizes_in) {
  trace::OpScope trace("reshape");
  detail::check_defined("reshape", x);
  Shape sizes = infer_size(sizes_in, x.numel(), "reshape", x.sizes());
  Tensor out = view_strides(x.sizes(), x.strides(), sizes) ? view(x, sizes) : view(clone(x, MemoryFormat::Contiguous), sizes);
  if (trace) trace.record({x}, out, {{"shape", trace::ints(sizes_in)}});
  return out;
}

Tensor permute(const Tensor& x, IntArrayRef dims) {
  trace::OpScope trace("permute");
  detail::check_defined("permute", x);
  const int64_t nd = x.dim();
  COHORT_CHECK(static_cast<int64_t>(dims.size()) == nd, "permute: number of dims don't match: got ", dims.size(),
               " dims ", dims, " for a tensor of shape ", x.sizes());
  Shape sizes(nd), strides(nd), inverse(nd);
  std::vector<bool> seen(nd, false);
  for (int64_t i = 0; i < nd; ++i) {
    int64_t d = wrap_dim(dims[i], nd, "permute");
    COHORT_CHECK(!seen[d], "permute: repeated dim in ", dims);
    seen[d] = true;
    sizes[i] = x.size(d);
    strides[i] = x.stride(d);
    inverse[d] = i;
  }
  Tensor out = record_view("PermuteBackward0", x, sizes, strides, x.storage_offset(),
                           [inverse](const Tensor& g) { return std::vector<Tensor>{g.permute(inverse)}; });
  if (trace) trace.record({x}, out, {{"perm", trace::ints(dims)}});
  return out;
}

Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  trace::OpScope trace("permute");
  detail::check_defined("transpose", x);
  if (x.dim() == 0) return view(x, {});
  int64_t a = wrap_dim(dim0, x.dim(), "transpose"), b = wrap_dim(dim1, x.dim(), "transpose");
  Shape sizes = x.sizes().vec(), strides = x.strides().vec();
  std::swap(sizes[a], sizes[b]);
  std::swap(strides[a], strides[b]);
  Tensor out = record_view("TransposeBackward0", x, sizes, strides, x.storage_offset(),
                           [a, b](const Tensor& g) { return std::vector<Tensor>{g.transpose(a, b)}; });
  if (trace) {
    std::vector<int64_t> perm(x.dim());
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[a], perm[b]);
    trace.record({x}, out, {{"perm", perm}});
  }
  return out;
}

Tensor t(const Tensor& x) {
  detail::check_defined("t", x);
  COHORT_CHECK(x.dim() <= 2, "t: expects a tensor with <= 2 dimensions, but got shape ", x.sizes(),
               "; hint: use transpose(dim0, dim1) or mT-style permute");
  if (x.dim() < 2) return view(x, x.sizes());
  return record_view("TBackward0", x, {x.size(1), x.size(0)}, {x.stride(1), x.stride(0)}, x.storage_offset(),
                     [](const Tensor& g) { return std::vector<Tensor>{g.t()}; });
}

Tensor expand(const Tensor& x, IntArrayRef sizes_in) {
  detail::check_defined("expand", x);
  const int64_t nd = static_cast<int64_t>(sizes_in.size());
  COHORT_CHECK(nd >= x.dim(), "expand: the number of sizes provided (", nd,
               ") must be greater or equal to the number of dimensions in the tensor (", x.dim(), "), got ", sizes_in,
               " for shape ", x.sizes());
  Shape sizes(nd), strides(nd);
  const int64_t lead = nd - x.dim();
  for (int64_t i = nd - 1; i >= 0; --i) {
    int64_t want = sizes_in[i];
    if (i < lead) {
      COHORT_CHECK(want >= 0, "expand: -1 is not allowed in a leading, non-existing dimension, got ", sizes_in);
      sizes[i] = want;
      strides[i] = 0;
      continue;
    }
    int64_t have = x.size(i - lead);
    if (want == -1) want = have;
    COHORT_CHECK(have == want || have == 1, "expand: the expanded size of the tensor (", want,
                 ") must match the existing size (", have, ") at non-singleton dimension ", i, ". Target sizes: ",
                 sizes_in, ". Tensor sizes: ", x.sizes());
    sizes[i] = want;
    strides[i] = have == want ? x.stride(i - lead) : 0;
  }
  Shape in_sizes = x.sizes().vec();
  return record_view("ExpandBackward0", x, sizes, strides, x.storage_offset(),
                     [in_sizes](const Tensor& g) { return std::vector<Tensor>{sum_to(g, in_sizes)}; });
}

Tensor slice(const Tensor& x, int64_t dim, std::optional<int64_t> start_in, std::optional<int64_t> end_in, int64_t step) {
  detail::check_defined("slice", x);
  COHORT_CHECK(x.dim() > 0, "slice: cannot slice a 0-d tensor");
  COHORT_CHECK(step > 0, "slice: step must be positive, got ", step);
  dim = wrap_dim(dim, x.dim(), "slice");
  const int64_t n = x.size(dim);
  int64_t start = start_in.value_or(0), end = end_in.value_or(n);
  if (start < 0) start += n;
  if (end < 0) end += n;
  start = std::clamp<int64_t>(start, 0, n);
  end = std::clamp<int64_t>(end, start, n);
  int64_t len = (end - start + step - 1) / step;
  Shape sizes = x.sizes().vec(), strides = x.strides().vec();
  sizes[dim] = len;
  strides[dim] *= step;
  Shape in_sizes = x.sizes().vec();
  return record_view("SliceBackward0", x, sizes, strides, x.storage_offset() + start * x.stride(dim),
                     [=](const Tensor& g) {
                       return std::vector<Tensor>{scatter_into_zeros(
                           "SliceBackwardBackward0", g, in_sizes,
                           [=](const Tensor& t) { return t.slice(dim, start, end, step); })};
                     });
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  detail::check_defined("narrow", x);
  COHORT_CHECK(x.dim() > 0, "narrow: cannot be applied to a 0-dim tensor");
  dim = wrap_dim(dim, x.dim(), "narrow");
  const int64_t n = x.size(dim);
  if (start < 0) start += n;
  COHORT_CHECK_AS(IndexError, start >= 0 && length >= 0 && start + length <= n, "narrow: start (", start,
                  ") + length (", length, ") exceeds dimension size (", n, ") of dim ", dim, " of shape ", x.sizes());
  return slice(x, dim, start, start + length, 1);
}

Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  detail::check_defined("select", x);
  COHORT_CHECK_AS(IndexError, x.dim() > 0, "select: cannot select from a 0-d tensor; hint: use item()");
  dim = wrap_dim(dim, x.dim(), "select");
  const int64_t n = x.size(dim);
  COHORT_CHECK_AS(IndexError, index >= -n && index < n, "select: index ", index, " is out of bounds for dimension ", dim,
                  " with size ", n);
  if (index < 0) index += n;
  Shape sizes = x.sizes().vec(), strides = x.strides().vec();
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  Shape in_sizes = x.sizes().vec();
  return record_view("SelectBackward0", x, sizes, strides, x.storage_offset() + index * x.stride(dim),
                     [=](const Tensor& g) {
                       return std::vector<Tensor>{scatter_into_zeros(
                           "SelectBackwardBackward0", g, in_sizes, [=](const Tensor& t) { return t.select(dim, index); })};
                     });
}

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  trace::OpScope trace("reshape");
  detail::check_defined("unsqueeze", x);
  dim = wrap_dim(dim, x.dim() + 1, "unsqueeze");
  Shape sizes = x.sizes().vec(), strides = x.strides().vec();
  int64_t stride = dim < x.dim() ? x.stride(dim) * x.size(dim) : 1;
  sizes.insert(sizes.begin() + dim, 1);
  strides.insert(strides.begin() + dim, stride);
  Tensor out = record_view("UnsqueezeBackward0", x, sizes, strides, x.storage_offset(),
                           [dim](const Tensor& g) { return std::vector<Tensor>{g.squeeze(dim)}; });
  if (trace) trace.record({x}, out, {{"shape", sizes}});
  return out;
}

Tensor squeeze(const Tensor& x) {
  detail::check_defined("squeeze", x);
  Shape sizes, strides;
  for (int64_t d = 0; d < x.dim(); ++d)
    if (x.size(d) != 1) sizes.push_back(x.size(d)), strides.push_back(x.stride(d));
  Shape in_sizes = x.sizes().vec();
  return record_view("SqueezeBackward0", x, sizes, strides, x.storage_offset(),
                     [in_sizes](const Tensor& g) { return std::vector<Tensor>{g.reshape(in_sizes)}; });
}

Tensor squeeze(const Tensor& x, int64_t dim) {
  trace::OpScope trace("reshape");
  detail::check_defined("squeeze", x);
  if (x.dim() == 0) return view(x, {});
  dim = wrap_dim(dim, x.dim(), "squeeze");
  if (x.size(dim) != 1) {
    Tensor out = view(x, x.sizes());
    if (trace) trace.record({x}, out, {{"shape", x.sizes().vec()}});
    return out;
  }
  Shape sizes = x.sizes().vec(), strides = x.strides().vec();
  sizes.erase(sizes.begin() + dim);
  strides.erase(strides.begin() + dim);
  Tensor out = record_view("SqueezeBackward1", x, sizes, strides, x.storage_offset(),
                           [dim](const Tensor& g) { return std::vector<Tensor>{g.unsqueeze(dim)}; });
  if (trace) trace.record({x}, out, {{"shape", sizes}});
  return out;
}

Tensor flatten(const Tensor& x, int64_t start_dim, int64_t end_dim) {
  trace::OpScope trace("flatten");
  detail::check_defined("flatten", x);
  if (x.dim() == 0) return reshape(x, {1});
  int64_t s = wrap_dim(start_dim, x.dim(), "flatten"), e = wrap_dim(end_dim, x.dim(), "flatten");
  COHORT_CHECK(s <= e, "flatten: start_dim (", start_dim, ") cannot come after end_dim (", end_dim, ")");
  Shape sizes;
  for (int64_t d = 0; d < s; ++d) sizes.push_back(x.size(d));
  int64_t merged = 1;
  for (int64_t d = s; d <= e; ++d) merged *= x.size(d);
  sizes.push_back(merged);
  for (int64_t d = e + 1; d < x.dim(); ++d) sizes.push_back(x.size(d));
  Tensor out = reshape(x, sizes);
  if (trace) trace.record({x}, out, {{"start_dim", s}, {"end_dim", e}});
  return out;
}

Tensor unflatten(const Tensor& x, int64_t dim, IntArrayRef sizes_in) {
  detail::check_defined("unflatten", x);
  dim = wrap_dim(dim, x.dim(), "unflatten");
  Shape inner = infer_size(sizes_in, x.size(dim), "unflatten", x.sizes());
  Shape sizes = x.sizes().vec();
  sizes.erase(sizes.begin() + dim);
  sizes.insert(sizes.begin() + dim, inner.begin(), inner.end());
  return view(x, sizes);
}

Tensor as_strided(const Tensor& x, IntArrayRef sizes, IntArrayRef strides, std::optional<int64_t> offset_in) {
  detail::check_defined("as_strided", x);
  COHORT_CHECK(sizes.size() == strides.size(), "as_strided: got ", sizes.size(), " sizes but ", strides.size(), " strides");
  int64_t offset = offset_in.value_or(x.storage_offset());
  int64_t last = offset;
  for (size_t i = 0; i < sizes.size(); ++i) {
    COHORT_CHECK(sizes[i] >= 0 && strides[i] >= 0, "as_strided: negative size or stride in ", sizes, " / ", strides);
    if (sizes[i] == 0) last = -1;
  }
  if (last >= 0)
    for (size_t i = 0; i < sizes.size(); ++i) last += (sizes[i] - 1) * strides[i];
  int64_t capacity = static_cast<int64_t>(x.unsafe_impl()->storage()->nbytes() / x.element_size());
  COHORT_CHECK_AS(IndexError, offset >= 0 && last < capacity, "as_strided: sizes ", sizes, ", strides ", strides,
                  " and offset ", offset, " reach element ", last, " but the storage holds ", capacity, " elements");
  // Backward scatters through the same geometry over a flat index of the input's elements.
  Shape in_sizes = x.sizes().vec(), in_strides = x.strides().vec();
  int64_t in_offset = x.storage_offset();
  return record_view("AsStridedBackward0", x, sizes.vec(), strides.vec(), offset, [=](const Tensor& g) {
    COHORT_CHECK(in_strides == contiguous_strides(in_sizes),
                 "as_strided: backward is supported only for contiguous inputs, got strides ", IntArrayRef(in_strides));
    int64_t n = 1;
    for (int64_t s : in_sizes) n *= s;
    Tensor positions = arange(n, TensorOptions(kInt64).device(g.device()));
    Tensor index = positions.as_strided(sizes.vec(), strides.vec(), offset - in_offset).reshape({-1});
    Tensor flat = zeros({n}, g.options());
    return std::vector<Tensor>{scatter_add(flat, 0, index, g.reshape({-1})).reshape(in_sizes)};
  });
}

}  // namespace cohort
