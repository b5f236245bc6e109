// In-place shape ops (unsqueeze_, squeeze_, transpose_, t_): the tensor takes the geometry of the
// out-of-place view and, when it carries a graph, that view's history, so a gradient reaching it
// goes back through the view's backward.
#include "cohort/ops/shape.h"

#include "ops/internal.h"

namespace cohort {

namespace {

// `view`: the out-of-place form of `op` applied to self.
const Tensor& take_geometry(const char* op, const Tensor& self, const Tensor& view) {
  detail::check_inplace(op, self, view.requires_grad());
  TensorImpl* impl = self.unsafe_impl();
  impl->set_storage(impl->storage(), view.sizes().vec(), view.strides().vec(), view.storage_offset());
  detail::rebase_history(self, view);
  return self;
}

}  // namespace

const Tensor& Tensor::unsqueeze_(int64_t dim) const {
  return take_geometry("unsqueeze_", *this, cohort::unsqueeze(*this, dim));
}
const Tensor& Tensor::squeeze_() const { return take_geometry("squeeze_", *this, cohort::squeeze(*this)); }
const Tensor& Tensor::squeeze_(int64_t dim) const {
  return take_geometry("squeeze_", *this, cohort::squeeze(*this, dim));
}
const Tensor& Tensor::transpose_(int64_t dim0, int64_t dim1) const {
  return take_geometry("transpose_", *this, cohort::transpose(*this, dim0, dim1));
}
const Tensor& Tensor::t_() const { return take_geometry("t_", *this, cohort::t(*this)); }

}  // namespace cohort
