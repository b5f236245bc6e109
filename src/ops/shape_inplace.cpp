// In-place shape ops (unsqueeze_, squeeze_, transpose_, t_): the tensor takes the geometry of the
// out-of-place view and, when it carries a graph, that view's history, so a gradient reaching it
// goes back through the view's backward. Each reports itself to the tracer with the tensor as both
// input and output (its TensorImpl is the same before and after), so that a trace gives the tensor its
// new value rather than the one it had.
#include "cohort/autograd/trace.h"
#include "cohort/ops/shape.h"

#include <optional>
#include <utility>
#include <vector>

#include "ops/internal.h"

namespace cohort {

namespace {

// `view`: the out-of-place form of `op` applied to self; `attr` describes the change to a tracer.
const Tensor& take_geometry(trace::OpScope& trace, const char* op, const Tensor& self, const Tensor& view,
                            trace::Attr attr) {
  detail::check_inplace(op, self, view.requires_grad());
  TensorImpl* impl = self.unsafe_impl();
  impl->set_storage(impl->storage(), view.sizes().vec(), view.strides().vec(), view.storage_offset());
  detail::rebase_history(self, view);
  if (trace) trace.record({self}, self, {std::move(attr)});
  return self;
}

int64_t wrapped(int64_t dim, int64_t rank) { return dim < 0 ? dim + rank : dim; }

// The dims of self of size one that squeeze removes: all, or `dim` when it has size one.
std::vector<int64_t> squeezed_dims(const Tensor& self, std::optional<int64_t> dim) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < self.dim(); ++d)
    if (self.size(d) == 1 && (!dim || wrapped(*dim, self.dim()) == d)) dims.push_back(d);
  return dims;
}

std::vector<int64_t> swapped(int64_t rank, int64_t a, int64_t b) {
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank; ++d) perm.push_back(d);
  if (rank > 0) std::swap(perm[static_cast<size_t>(wrapped(a, rank))], perm[static_cast<size_t>(wrapped(b, rank))]);
  return perm;
}

}  // namespace

const Tensor& Tensor::unsqueeze_(int64_t dim) const {
  trace::OpScope trace("unsqueeze_");
  const Tensor view = cohort::unsqueeze(*this, dim);
  return take_geometry(trace, "unsqueeze_", *this, view, {"dims", std::vector<int64_t>{wrapped(dim, this->dim() + 1)}});
}
const Tensor& Tensor::squeeze_() const {
  trace::OpScope trace("squeeze_");
  std::vector<int64_t> dims = squeezed_dims(*this, std::nullopt);
  return take_geometry(trace, "squeeze_", *this, cohort::squeeze(*this), {"dims", std::move(dims)});
}
const Tensor& Tensor::squeeze_(int64_t dim) const {
  trace::OpScope trace("squeeze_");
  std::vector<int64_t> dims = squeezed_dims(*this, dim);
  return take_geometry(trace, "squeeze_", *this, cohort::squeeze(*this, dim), {"dims", std::move(dims)});
}
const Tensor& Tensor::transpose_(int64_t dim0, int64_t dim1) const {
  trace::OpScope trace("transpose_");
  std::vector<int64_t> perm = swapped(this->dim(), dim0, dim1);
  return take_geometry(trace, "transpose_", *this, cohort::transpose(*this, dim0, dim1), {"perm", std::move(perm)});
}
const Tensor& Tensor::t_() const {
  trace::OpScope trace("t_");
  std::vector<int64_t> perm = swapped(this->dim(), 0, this->dim() < 2 ? 0 : 1);
  return take_geometry(trace, "t_", *this, cohort::t(*this), {"perm", std::move(perm)});
}

}  // namespace cohort
