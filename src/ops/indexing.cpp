// libtorch-style indexing (x.index({Slice(), 1}), index_put_) and the gathering ops.
#include "cohort/ops/indexing.h"

#include <cstring>

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"
#include "cohort/ops/unique.h"
#include "ops/cpu/kernels.h"
#include "ops/internal.h"

namespace cohort {

using indexing::TensorIndex;

indexing::TensorIndex::TensorIndex(const char* s) : kind_(Kind::Ellipsis) {
  COHORT_CHECK(s && std::strcmp(s, "...") == 0, "index: the only string index is \"...\", got \"", s ? s : "", "\"");
}

namespace {

void check_index_tensor(const char* op, const Tensor& x, int64_t dim, const Tensor& index) {
  COHORT_CHECK_AS(TypeError, index.dtype() == kInt64 || index.dtype() == kInt32, op,
                  ": expected an int64 index tensor, got ", index.dtype());
  detail::check_same_device(op, x, index);
  if (index.numel() == 0) return;
  Tensor i = index.to(kInt64);
  int64_t lo = i.min().item<int64_t>(), hi = i.max().item<int64_t>();
  const int64_t n = x.dim() ? x.size(dim) : 1;
  COHORT_CHECK_AS(IndexError, lo >= 0 && hi < n, op, ": index ", lo < 0 ? lo : hi, " is out of bounds for dimension ",
                  dim, " with size ", n);
}

// A tensor index and the dim of the basic view it applies to (its first, for a bool mask).
struct TensorAt {
  Tensor index;
  int64_t dim;
};

// Applies integer, slice, None and ellipsis indices as views; returns the view and the tensor
// indices with the dims of the view they apply to.
Tensor apply_basic(const Tensor& x, ArrayRef<TensorIndex> indices, std::vector<TensorAt>* tensors) {
  int64_t consumed = 0;
  bool ellipsis = false;
  for (const TensorIndex& i : indices) {
    if (i.kind() == TensorIndex::Kind::Integer || i.kind() == TensorIndex::Kind::Slice) ++consumed;
    if (i.kind() == TensorIndex::Kind::Tensor) consumed += i.tensor().dtype() == kBool ? i.tensor().dim() : 1;
    if (i.kind() == TensorIndex::Kind::Ellipsis) {
      COHORT_CHECK_AS(IndexError, !ellipsis, "index: an index can only have a single ellipsis ('...')");
      ellipsis = true;
    }
  }
  COHORT_CHECK_AS(IndexError, consumed <= x.dim(), "index: too many indices for tensor of dimension ", x.dim(),
                  " (got ", consumed, ")");
  Tensor r = x;
  int64_t dim = 0;
  for (const TensorIndex& i : indices) {
    switch (i.kind()) {
      case TensorIndex::Kind::Integer: r = select(r, dim, i.integer()); break;
      case TensorIndex::Kind::Slice:
        COHORT_CHECK(i.slice().step() > 0, "index: step must be greater than zero, got ", i.slice().step());
        r = slice(r, dim, i.slice().start(), i.slice().stop(), i.slice().step());
        ++dim;
        break;
      case TensorIndex::Kind::None: r = unsqueeze(r, dim); ++dim; break;
      case TensorIndex::Kind::Ellipsis: dim += x.dim() - consumed; break;
      case TensorIndex::Kind::Tensor:
        // Index tensors may live on another device than x (as CPU indices of a CUDA tensor in PyTorch).
        tensors->push_back({i.tensor().to(x.device()), dim});
        dim += i.tensor().dtype() == kBool ? i.tensor().dim() : 1;
        break;
    }
  }
  return r;
}

// Positions of true values of a bool mask over dims [dim, dim + mask.dim()) of r, as flat indices
// into those dims merged.
Tensor mask_to_index(const Tensor& mask) {
  Tensor flat = mask.reshape({-1}).contiguous();
  const bool* m = flat.data_ptr<bool>();
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < flat.numel(); ++i)
    if (m[i]) idx.push_back(i);
  return tensor(ArrayRef<int64_t>(idx), TensorOptions(kInt64).device(mask.device()));
}

// idx (int32 or int64) as int64 within [0, n): negative values count from the end, as in PyTorch.
Tensor wrapped_index(const char* op, const Tensor& idx, int64_t n, int64_t dim) {
  COHORT_CHECK_AS(TypeError, idx.dtype() == kInt64 || idx.dtype() == kInt32, op,
                  ": expected an int64, int32 or bool index tensor, got ", idx.dtype());
  Tensor i = idx.to(kInt64);
  if (i.numel() == 0) return i;
  const int64_t lo = i.min().item<int64_t>(), hi = i.max().item<int64_t>();
  COHORT_CHECK_AS(IndexError, lo >= -n && hi < n, op, ": index ", lo < -n ? lo : hi, " is out of bounds for dimension ",
                  dim, " with size ", n);
  return lo < 0 ? where(lt(i, 0), add(i, n), i) : i;
}

// Several tensor indices (advanced indexing): a bool mask of k dims becomes k int64 indices (the
// coordinates of its true values); all are broadcast together to `batch`, which replaces the dims
// they index: in their place when those dims are consecutive, in front otherwise (NumPy's rule).
struct Advanced {
  std::vector<Tensor> index;  // int64 in range, each of shape batch
  std::vector<int64_t> dims;  // the dims of the view they index, increasing
  std::vector<int64_t> rest;  // the other dims, increasing
  Shape batch;
  bool adjacent = true;

  int64_t batch_numel() const {
    int64_t n = 1;
    for (int64_t b : batch) n *= b;
    return n;
  }
  // The view's dims reordered: the indexed ones first.
  std::vector<int64_t> indexed_first() const {
    std::vector<int64_t> p = dims;
    p.insert(p.end(), rest.begin(), rest.end());
    return p;
  }
  // From [batch..., rest...] to the result's order (batch where the indexed dims were, if adjacent).
  std::vector<int64_t> to_result() const {
    const int64_t nb = static_cast<int64_t>(batch.size()), before = adjacent ? dims.front() : 0;
    std::vector<int64_t> p;
    for (int64_t i = 0; i < before; ++i) p.push_back(nb + i);
    for (int64_t i = 0; i < nb; ++i) p.push_back(i);
    for (int64_t i = before; i < static_cast<int64_t>(rest.size()); ++i) p.push_back(nb + i);
    return p;
  }
};

// Whether `from` broadcasts to a shape with `to` (both ways, as broadcast_shapes).
bool broadcastable(IntArrayRef to, IntArrayRef from) {
  for (size_t i = 1; i <= std::min(to.size(), from.size()); ++i) {
    const int64_t a = to[to.size() - i], b = from[from.size() - i];
    if (a != b && a != 1 && b != 1) return false;
  }
  return true;
}

std::string index_shapes(const std::vector<Tensor>& index) {
  std::string s;
  for (const Tensor& i : index) s += (s.empty() ? "" : ", ") + detail::str(i.sizes());
  return s;
}

Advanced advanced(const char* op, const Tensor& r, const std::vector<TensorAt>& tensors) {
  Advanced a;
  for (const TensorAt& t : tensors) {
    if (t.index.dtype() == kBool) {
      for (int64_t d = 0; d < t.index.dim(); ++d)
        COHORT_CHECK_AS(IndexError, t.index.size(d) == r.size(t.dim + d), op, ": the shape of the mask ",
                        t.index.sizes(), " does not match the shape of the indexed tensor ", r.sizes(), " at index ", d);
      Tensor where_true = nonzero(t.index);  // [n, k]
      for (int64_t d = 0; d < t.index.dim(); ++d) {
        a.index.push_back(where_true.select(1, d));
        a.dims.push_back(t.dim + d);
      }
    } else {
      a.index.push_back(wrapped_index(op, t.index, r.size(t.dim), t.dim));
      a.dims.push_back(t.dim);
    }
  }
  for (size_t k = 0; k < a.index.size(); ++k) {
    COHORT_CHECK_AS(IndexError, broadcastable(a.batch, a.index[k].sizes()), op,
                    ": the index tensors cannot be broadcast together: shapes ", index_shapes(a.index));
    a.batch = broadcast_shapes(a.batch, a.index[k].sizes(), op);
  }
  for (Tensor& i : a.index) i = i.expand(a.batch);
  for (size_t k = 1; k < a.dims.size(); ++k) a.adjacent = a.adjacent && a.dims[k] == a.dims[k - 1] + 1;
  for (int64_t d = 0, k = 0; d < r.dim(); ++d) {
    if (k < static_cast<int64_t>(a.dims.size()) && a.dims[k] == d) ++k;
    else a.rest.push_back(d);
  }
  return a;
}

// r indexed by several tensors: the indexed dims are moved first and merged, and one index_select
// takes the rows at the merged (row-major) positions, so the gradient is index_select's.
Tensor advanced_index(const Tensor& r, const Advanced& a) {
  Shape merged_sizes{1}, out_sizes = a.batch;
  Tensor linear = zeros(a.batch, TensorOptions(kInt64).device(r.device()));
  for (size_t k = 0; k < a.dims.size(); ++k) {
    const int64_t n = r.size(a.dims[k]);
    linear = add(mul(linear, n), a.index[k]);
    merged_sizes[0] *= n;
  }
  for (int64_t d : a.rest) merged_sizes.push_back(r.size(d)), out_sizes.push_back(r.size(d));
  Tensor merged = r.permute(a.indexed_first()).reshape(merged_sizes);
  return cohort::index_select(merged, 0, linear.reshape({-1})).reshape(out_sizes).permute(a.to_result());
}

// Writes value (broadcast to what advanced_index would return) into target at the positions of `a`;
// a position given twice gets the last value written there.
const Tensor& put_advanced(const Tensor& self, const Tensor& target, const Advanced& a, const Tensor& value) {
  NoGradGuard no_grad;
  Shape result_sizes = a.batch, rows{a.batch_numel()};
  for (int64_t d : a.rest) result_sizes.push_back(target.size(d)), rows.push_back(target.size(d));
  std::vector<int64_t> to_result = a.to_result(), from_result(to_result.size());
  Shape shown(to_result.size());
  for (size_t i = 0; i < to_result.size(); ++i) from_result[to_result[i]] = static_cast<int64_t>(i), shown[i] = result_sizes[to_result[i]];
  COHORT_CHECK(value.dim() <= static_cast<int64_t>(shown.size()) && broadcastable(shown, value.sizes()) &&
                   broadcast_shapes(shown, value.sizes(), "index_put_") == shown,
               "index_put_: shape mismatch: value tensor of shape ", value.sizes(),
               " cannot be broadcast to indexing result of shape ", shown);
  Tensor v = value.to(self.dtype()).expand(shown).permute(from_result).reshape(rows);
  Tensor moved = target.permute(a.indexed_first());
  std::vector<Tensor> flat;
  for (const Tensor& i : a.index) flat.push_back(i.reshape({-1}).contiguous());
  for (int64_t j = 0; j < rows[0]; ++j) {
    Tensor dst = moved;
    for (const Tensor& i : flat) dst = dst.select(0, i.data_ptr<int64_t>()[j]);
    kernel::copy(dst, v.select(0, j));
  }
  self.unsafe_impl()->storage()->bump_version();
  return self;
}

}  // namespace

Tensor Tensor::index(ArrayRef<TensorIndex> indices) const {
  std::vector<TensorAt> tensors;
  Tensor r = apply_basic(*this, indices, &tensors);
  if (tensors.empty()) return r;
  if (tensors.size() > 1) return advanced_index(r, advanced("index", r, tensors));
  const Tensor& tidx = tensors[0].index;
  const int64_t tdim = tensors[0].dim;
  if (tidx.dtype() == kBool) {
    for (int64_t d = 0; d < tidx.dim(); ++d)
      COHORT_CHECK_AS(IndexError, tidx.size(d) == r.size(tdim + d), "index: the shape of the mask ", tidx.sizes(),
                      " does not match the shape of the indexed tensor ", r.sizes(), " at index ", d);
    Tensor merged = r.flatten(tdim, tdim + tidx.dim() - 1);
    return cohort::index_select(merged, tdim, mask_to_index(tidx));
  }
  Tensor flat = wrapped_index("index", tidx, r.size(tdim), tdim).reshape({-1});
  Tensor picked = cohort::index_select(r, tdim, flat);
  return picked.unflatten(tdim, tidx.sizes().empty() ? IntArrayRef(Shape{1}) : tidx.sizes());
}

Tensor Tensor::index(std::initializer_list<TensorIndex> indices) const {
  return index(ArrayRef<TensorIndex>(indices.begin(), indices.size()));
}

const Tensor& Tensor::index_put_(ArrayRef<TensorIndex> indices, const Tensor& value) const {
  std::vector<TensorAt> tensors;
  Tensor target;
  {
    NoGradGuard g;  // the view is a write target, not part of a graph
    target = apply_basic(*this, indices, &tensors);
  }
  if (tensors.empty()) {
    COHORT_CHECK_AS(AutogradError, !autograd::needs_grad({*this, value}), "index_put_: assigning into a tensor "
                    "that takes part in autograd is not supported; hint: build the result with cat/where, or do it under NoGradGuard");
    Shape shape = broadcast_shapes(target.sizes(), value.sizes(), "index_put_");
    COHORT_CHECK(shape == target.sizes().vec(), "index_put_: shape mismatch: value tensor of shape ", value.sizes(),
                 " cannot be broadcast to indexing result of shape ", target.sizes());
    kernel::copy(target, value);
    unsafe_impl()->storage()->bump_version();
    return *this;
  }
  COHORT_CHECK_AS(AutogradError, !autograd::needs_grad({*this, value}),
                  "index_put_: tensor-indexed assignment with autograd is not supported");
  if (tensors.size() > 1) return put_advanced(*this, target, advanced("index_put_", target, tensors), value);
  const Tensor& tidx = tensors[0].index;
  const int64_t tdim = tensors[0].dim;
  Tensor idx = tidx.dtype() == kBool ? mask_to_index(tidx)
                                     : wrapped_index("index_put_", tidx, target.size(tdim), tdim).reshape({-1});
  Tensor merged = tidx.dtype() == kBool ? target.flatten(tdim, tdim + tidx.dim() - 1) : target;
  check_index_tensor("index_put_", merged, tdim, idx);
  const int64_t* ix = idx.contiguous().data_ptr<int64_t>();
  Tensor v = value.to(dtype());
  for (int64_t i = 0; i < idx.numel(); ++i) {
    Tensor dst = merged.select(tdim, ix[i]);
    Tensor src = v.dim() == 0 ? v : (v.dim() > dst.dim() ? v.select(tdim, i) : v);
    kernel::copy(dst, src);
  }
  unsafe_impl()->storage()->bump_version();
  return *this;
}

const Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Tensor& value) const {
  return index_put_(ArrayRef<TensorIndex>(indices.begin(), indices.size()), value);
}
const Tensor& Tensor::index_put_(ArrayRef<TensorIndex> indices, const Scalar& value) const {
  return index_put_(indices, detail::scalar_to_tensor(value, dtype(), device()));
}
const Tensor& Tensor::index_put_(std::initializer_list<TensorIndex> indices, const Scalar& value) const {
  return index_put_(ArrayRef<TensorIndex>(indices.begin(), indices.size()), value);
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index_in) {
  detail::check_defined("index_select", x);
  COHORT_CHECK(index_in.dim() <= 1, "index_select: index must be 0-d or 1-d, got shape ", index_in.sizes());
  dim = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "index_select");
  check_index_tensor("index_select", x, dim, index_in);
  Tensor index = index_in.to(kInt64).reshape({-1}).contiguous();
  Shape sizes = x.sizes().vec();
  if (x.dim() == 0) return x.clone();
  sizes[dim] = index.numel();
  Tensor out = detail::make_empty(sizes, x.dtype(), x.device());
  kernel::index_select(out, x, dim, index);
  Shape in_sizes = x.sizes().vec();
  return autograd::record("IndexSelectBackward0", out, {x}, [=](const Tensor& g) {
    Shape idx_shape(g.dim(), 1);
    idx_shape[dim] = index.numel();
    Tensor full_index = index.view(idx_shape).expand(g.sizes());
    return std::vector<Tensor>{scatter_add(zeros(in_sizes, g.options()), dim, full_index, g)};
  });
}

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  detail::check_defined("gather", x);
  dim = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "gather");
  COHORT_CHECK(index.dim() == x.dim(), "gather: index tensor must have the same number of dimensions as input tensor, got ",
               index.sizes(), " and ", x.sizes());
  for (int64_t d = 0; d < x.dim(); ++d)
    COHORT_CHECK(d == dim || index.size(d) <= x.size(d), "gather: size of index ", index.sizes(),
                 " exceeds the input's ", x.sizes(), " at dimension ", d);
  check_index_tensor("gather", x, dim, index);
  Tensor idx = index.to(kInt64);
  Tensor out = detail::make_empty(index.sizes(), x.dtype(), x.device());
  kernel::gather(out, x, dim, idx);
  Shape in_sizes = x.sizes().vec();
  return autograd::record("GatherBackward0", out, {x}, [=](const Tensor& g) {
    return std::vector<Tensor>{scatter_add(zeros(in_sizes, g.options()), dim, idx, g)};
  });
}

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  detail::check_defined("scatter_add", x);
  dim = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "scatter_add");
  COHORT_CHECK(index.dim() == x.dim() && src.dim() == x.dim(), "scatter_add: index ", index.sizes(), ", src ",
               src.sizes(), " and self ", x.sizes(), " must have the same number of dimensions");
  for (int64_t d = 0; d < x.dim(); ++d)
    COHORT_CHECK(index.size(d) <= src.size(d) && (d == dim || index.size(d) <= x.size(d)), "scatter_add: index ",
                 index.sizes(), " does not fit src ", src.sizes(), " and self ", x.sizes(), " at dimension ", d);
  check_index_tensor("scatter_add", x, dim, index);
  Tensor idx = index.to(kInt64);
  Tensor out = clone(x.detach(), MemoryFormat::Contiguous);
  kernel::scatter_add(out, dim, idx, src.to(x.dtype()).detach());
  bool x_grad = x.requires_grad(), src_grad = src.requires_grad();
  Shape src_sizes = src.sizes().vec();
  return autograd::record("ScatterAddBackward0", out, {x, src}, [=](const Tensor& g) {
    Tensor gs;
    if (src_grad) {
      // Only the part of src that index reaches was added; the rest gets zero gradient (padded by
      // cat, not written in place, so that gs is differentiable again under create_graph).
      gs = gather(g, dim, idx);
      for (int64_t d = 0; d < idx.dim(); ++d) {
        if (idx.size(d) == src_sizes[d]) continue;
        Shape pad = gs.sizes().vec();
        pad[d] = src_sizes[d] - idx.size(d);
        gs = cat({gs, zeros(pad, g.options())}, d);
      }
    }
    return std::vector<Tensor>{x_grad ? g : Tensor(), gs};
  });
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  COHORT_CHECK_AS(TypeError, mask.dtype() == kBool, "masked_select: expected a bool mask, got ", mask.dtype());
  Shape shape = broadcast_shapes(x.sizes(), mask.sizes(), "masked_select");
  return index_select(x.expand(shape).reshape({-1}), 0, mask_to_index(mask.expand(shape)));
}

Tensor one_hot(const Tensor& self, int64_t num_classes) {
  detail::check_defined("one_hot", self);
  COHORT_CHECK_AS(TypeError, self.dtype() == kInt64, "one_hot: expected int64 class indices, got ", self.dtype(),
                  "; hint: convert with .to(kLong)");
  COHORT_CHECK(num_classes == -1 || num_classes > 0, "one_hot: num_classes must be positive or -1 (inferred), got ",
               num_classes);
  int64_t lo = 0, hi = -1;
  if (self.numel() > 0) lo = self.min().item<int64_t>(), hi = self.max().item<int64_t>();
  COHORT_CHECK(lo >= 0, "one_hot: class indices must be non-negative, got ", lo);
  if (num_classes == -1) {
    COHORT_CHECK(self.numel() > 0, "one_hot: cannot infer num_classes from an empty tensor; hint: pass num_classes");
    num_classes = hi + 1;
  }
  COHORT_CHECK(hi < num_classes, "one_hot: class index ", hi, " is out of range for num_classes=", num_classes);
  Shape sizes = self.sizes().vec();
  sizes.push_back(num_classes);
  Tensor index = self.unsqueeze(-1);
  return scatter_add(zeros(sizes, TensorOptions(kInt64).device(self.device())), -1, index, ones_like(index));
}

Tensor Tensor::index_select(int64_t dim, const Tensor& index) const { return cohort::index_select(*this, dim, index); }
Tensor Tensor::gather(int64_t dim, const Tensor& index) const { return cohort::gather(*this, dim, index); }

}  // namespace cohort
