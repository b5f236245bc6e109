// scatter, index_add and masked_scatter, out of place and in place. scatter has its own kernel and
// node; index_add and masked_scatter are composed of scatter_add, gather and where, so their
// gradients (and second gradients) come from those ops.
#include "cohort/ops/scatter.h"

#include <vector>

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/indexing.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"
#include "ops/cpu/kernels.h"
#include "ops/cpu/scatter_kernels.h"
#include "ops/internal.h"

namespace cohort {

namespace {

void check_index(const char* op, const Tensor& x, int64_t dim, const Tensor& index) {
  COHORT_CHECK_AS(TypeError, index.dtype() == kInt64, op, ": expected an int64 index tensor, got ", index.dtype());
  detail::check_same_device(op, x, index);
  if (index.numel() == 0) return;
  const int64_t lo = index.min().item<int64_t>(), hi = index.max().item<int64_t>();
  const int64_t n = x.dim() ? x.size(dim) : 1;
  COHORT_CHECK_AS(IndexError, lo >= 0 && hi < n, op, ": index ", lo < 0 ? lo : hi,
                  " is out of bounds for dimension ", dim, " with size ", n);
}

void check_same_dtype(const char* op, const Tensor& x, const Tensor& src, const char* what) {
  COHORT_CHECK_AS(TypeError, x.dtype() == src.dtype(), op, ": expected self and ", what,
                  " to have the same dtype, got ", x.dtype(), " and ", src.dtype());
}

// Checks scatter's shapes (as scatter_add's) and returns dim wrapped.
int64_t check_scatter(const char* op, const Tensor& x, int64_t dim, const Tensor& index, const Tensor* src) {
  detail::check_defined(op, x);
  dim = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), op);
  // src's sizes in messages, when there is a src (the value form has none).
  const std::string with_src = src ? detail::str(", src ", src->sizes()) : std::string();
  COHORT_CHECK(index.dim() == x.dim() && (!src || src->dim() == x.dim()), op, ": index ", index.sizes(), with_src,
               " and self ", x.sizes(), " must have the same number of dimensions");
  for (int64_t d = 0; d < x.dim(); ++d)
    COHORT_CHECK((!src || index.size(d) <= src->size(d)) && (d == dim || index.size(d) <= x.size(d)), op,
                 ": index ", index.sizes(), " does not fit", with_src, " and self ", x.sizes(), " at dimension ", d);
  check_index(op, x, dim, index);
  return dim;
}

// g gathered at index, padded with zeros up to src's sizes (src elements index does not reach get
// none); padded by cat so that it stays differentiable.
Tensor gathered_to(const Tensor& g, int64_t dim, const Tensor& index, const Shape& src_sizes) {
  Tensor gs = gather(g, dim, index);
  for (int64_t d = 0; d < index.dim(); ++d) {
    if (index.size(d) == src_sizes[d]) continue;
    Shape pad = gs.sizes().vec();
    pad[d] = src_sizes[d] - index.size(d);
    gs = cat({gs, zeros(pad, g.options())}, d);
  }
  return gs;
}

// Writes `result` (self's op computed out of place) into self, and gives self result's history.
const Tensor& assign(const char* op, const Tensor& self, const Tensor& result) {
  detail::check_inplace(op, self, result.requires_grad());
  {
    NoGradGuard no_grad;
    kernel::copy(self, result);
  }
  detail::rebase_history(self, result);
  self.unsafe_impl()->storage()->bump_version();
  return self;
}

}  // namespace

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  dim = check_scatter("scatter", x, dim, index, &src);
  check_same_dtype("scatter", x, src, "src");
  Tensor out = clone(x.detach(), MemoryFormat::Contiguous);
  kernel::scatter(out, dim, index.contiguous(), src.detach().contiguous());
  const bool x_grad = x.requires_grad(), src_grad = src.requires_grad();
  Shape src_sizes = src.sizes().vec();
  return autograd::record("ScatterBackward0", out, {x, src}, [=](const Tensor& g) {
    return std::vector<Tensor>{x_grad ? scatter(g, dim, index, 0) : Tensor(),
                               src_grad ? gathered_to(g, dim, index, src_sizes) : Tensor()};
  });
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Scalar& value) {
  dim = check_scatter("scatter", x, dim, index, nullptr);
  Tensor out = clone(x.detach(), MemoryFormat::Contiguous);
  Tensor src = detail::scalar_to_tensor(value, x.dtype(), x.device()).expand(index.sizes());
  kernel::scatter(out, dim, index.contiguous(), src);
  return autograd::record("ScatterBackward1", out, {x}, [=](const Tensor& g) {
    return std::vector<Tensor>{scatter(g, dim, index, 0)};
  });
}

Tensor index_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  detail::check_defined("index_add", x);
  detail::check_defined("index_add", source, "source");
  dim = wrap_dim(dim, std::max<int64_t>(x.dim(), 1), "index_add");
  check_same_dtype("index_add", x, source, "source");
  COHORT_CHECK(index.dim() <= 1, "index_add: index must be 0-d or 1-d, got shape ", index.sizes());
  COHORT_CHECK(source.dim() == x.dim(), "index_add: source ", source.sizes(), " and self ", x.sizes(),
               " must have the same number of dimensions");
  const int64_t slices = source.dim() ? source.size(dim) : 1;
  COHORT_CHECK(index.numel() == slices, "index_add: index has ", index.numel(), " entries but source ",
               source.sizes(), " has ", slices, " slices along dimension ", dim);
  for (int64_t d = 0; d < x.dim(); ++d)
    COHORT_CHECK(d == dim || source.size(d) == x.size(d), "index_add: source ", source.sizes(),
                 " must match self ", x.sizes(), " at every dimension but ", dim, ", differs at ", d);
  check_index("index_add", x, dim, index);
  if (x.dim() == 0) return x + source * alpha;
  Shape index_shape(x.dim(), 1);
  index_shape[dim] = index.numel();
  Tensor full = index.reshape(index_shape).expand(source.sizes());
  return scatter_add(x, dim, full, alpha.to<double>() == 1.0 ? source : source * alpha);
}

Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source) {
  detail::check_defined("masked_scatter", x);
  COHORT_CHECK_AS(TypeError, mask.dtype() == kBool, "masked_scatter: expected a bool mask, got ", mask.dtype());
  check_same_dtype("masked_scatter", x, source, "source");
  Shape shape = broadcast_shapes(x.sizes(), mask.sizes(), "masked_scatter");
  COHORT_CHECK(shape == x.sizes().vec(), "masked_scatter: mask ", mask.sizes(), " must broadcast to self's shape ",
               x.sizes());
  Tensor m = mask.expand(shape).reshape({-1}).contiguous();
  std::vector<int64_t> places;
  const bool* mp = m.data_ptr<bool>();
  for (int64_t i = 0; i < m.numel(); ++i)
    if (mp[i]) places.push_back(i);
  const int64_t n = static_cast<int64_t>(places.size());
  COHORT_CHECK(source.numel() >= n, "masked_scatter: mask has ", n, " true values but source ", source.sizes(),
               " has only ", source.numel(), " elements");
  Tensor index = tensor(ArrayRef<int64_t>(places), TensorOptions(kInt64).device(x.device()));
  Tensor values = source.reshape({-1}).narrow(0, 0, n);
  Tensor placed = scatter_add(zeros({x.numel()}, x.options()), 0, index, values);
  return where(m, placed, x.reshape({-1})).view(x.sizes());
}

const Tensor& Tensor::scatter_(int64_t d, const Tensor& i, const Tensor& s) const {
  return assign("scatter_", *this, cohort::scatter(*this, d, i, s));
}
const Tensor& Tensor::scatter_(int64_t d, const Tensor& i, const Scalar& v) const {
  return assign("scatter_", *this, cohort::scatter(*this, d, i, v));
}
const Tensor& Tensor::scatter_add_(int64_t d, const Tensor& i, const Tensor& s) const {
  return assign("scatter_add_", *this, cohort::scatter_add(*this, d, i, s));
}
const Tensor& Tensor::index_add_(int64_t d, const Tensor& i, const Tensor& s, const Scalar& a) const {
  return assign("index_add_", *this, cohort::index_add(*this, d, i, s, a));
}
const Tensor& Tensor::masked_scatter_(const Tensor& m, const Tensor& s) const {
  return assign("masked_scatter_", *this, cohort::masked_scatter(*this, m, s));
}
Tensor Tensor::scatter(int64_t d, const Tensor& i, const Tensor& s) const { return cohort::scatter(*this, d, i, s); }
Tensor Tensor::scatter(int64_t d, const Tensor& i, const Scalar& v) const { return cohort::scatter(*this, d, i, v); }
Tensor Tensor::scatter_add(int64_t d, const Tensor& i, const Tensor& s) const {
  return cohort::scatter_add(*this, d, i, s);
}
Tensor Tensor::index_add(int64_t d, const Tensor& i, const Tensor& s, const Scalar& a) const {
  return cohort::index_add(*this, d, i, s, a);
}
Tensor Tensor::masked_scatter(const Tensor& m, const Tensor& s) const { return cohort::masked_scatter(*this, m, s); }

}  // namespace cohort
