// Shared helpers of the ops.
#include "ops/internal.h"

#include "autograd/meta.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/reduction.h"
#include "ops/cpu/kernels.h"

namespace cohort::detail {

Tensor make_empty(IntArrayRef sizes, DType dtype, Device device) {
  int64_t n = checked_numel(sizes, "empty");
  check_device(device, "empty");
  size_t bytes = static_cast<size_t>(n);
  COHORT_CHECK_AS(OutOfMemoryError, bytes <= (size_t{1} << 62) / element_size(dtype), "empty: cannot allocate a ",
                  dtype, " tensor of sizes ", sizes, ": the byte count overflows");
  auto storage = std::make_shared<StorageImpl>(bytes * element_size(dtype), device);
  return Tensor(std::make_shared<TensorImpl>(std::move(storage), dtype, sizes.vec(), contiguous_strides(sizes), 0));
}

Tensor make_empty(IntArrayRef sizes, DType dtype, Device device, MemoryFormat format) {
  Tensor dense = make_empty(sizes, dtype, device);
  if (format == MemoryFormat::Contiguous) return dense;
  return Tensor(std::make_shared<TensorImpl>(dense.unsafe_impl()->storage(), dtype, sizes.vec(),
                                             memory_format_strides(sizes, format, "empty"), 0));
}

Tensor in_requested_format(Tensor t, const TensorOptions& options) {
  const MemoryFormat format = options.memory_format_opt().value_or(MemoryFormat::Contiguous);
  if (format == MemoryFormat::Contiguous) return t;
  Tensor laid_out = make_empty(t.sizes(), t.dtype(), t.device(), format);
  kernel::copy(laid_out, t);
  return laid_out;
}

Tensor make_view(const Tensor& t, Shape sizes, Shape strides, int64_t offset) {
  auto impl = std::make_shared<TensorImpl>(t.unsafe_impl()->storage(), t.dtype(), std::move(sizes),
                                           std::move(strides), offset);
  impl->set_is_view(true);
  return Tensor(std::move(impl));
}

Tensor cast_nograd(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  Tensor out = make_empty(t.sizes(), dtype, t.device());
  kernel::copy(out, t);
  return out;
}

Tensor scalar_to_tensor(const Scalar& s, DType dtype, Device device) {
  Tensor out = make_empty({}, dtype, device);
  kernel::fill(out, s);
  return out;
}

void check_same_device(const char* op, const Tensor& a, const Tensor& b) {
  COHORT_CHECK_AS(DeviceError, a.device() == b.device(), op, ": expected all tensors on one device, got ",
                  a.device(), " and ", b.device(), "; hint: move one with .to(device)");
}

void check_defined(const char* op, const Tensor& t, const char* what) {
  COHORT_CHECK(t.defined(), op, ": the ", what, " tensor is undefined");
}

void check_inplace(const char* op, const Tensor& self, bool result_requires_grad) {
  if (!GradMode::is_enabled()) return;
  COHORT_CHECK_AS(AutogradError, !(self.is_leaf() && self.requires_grad()), op,
                  ": a leaf tensor that requires grad (", self.dtype(), " ", self.sizes(),
                  ") is being used in an in-place operation; hint: do it under NoGradGuard, or on a clone()");
  COHORT_CHECK_AS(AutogradError, !(result_requires_grad && self.unsafe_impl()->is_view()), op,
                  ": in-place operation on a view (", self.sizes(), ") while recording gradients is not supported; "
                  "hint: use the out-of-place form, or clone() the view first");
}

void rebase_history(const Tensor& self, const Tensor& result) {
  if (!result.defined() || !result.grad_fn()) return;
  auto& meta = self.unsafe_impl()->ensure_autograd_meta();
  meta.grad_fn = result.grad_fn();
  meta.requires_grad = true;
}

void resize_out(const char* op, Tensor& out, IntArrayRef sizes, DType dtype) {
  COHORT_CHECK(out.defined(), op, ": the out tensor is undefined");
  COHORT_CHECK_AS(TypeError, can_cast(dtype, out.dtype()), op, ": result type ", dtype,
                  " can't be cast to the out tensor's dtype ", out.dtype());
  COHORT_CHECK_AS(AutogradError, !(GradMode::is_enabled() && out.requires_grad()), op,
                  ": out= arguments don't support automatic differentiation, but the out tensor requires grad");
  if (out.sizes() == sizes) return;
  Tensor fresh = make_empty(sizes, out.dtype(), out.device());
  out.unsafe_impl()->set_storage(fresh.unsafe_impl()->storage(), sizes.vec(), contiguous_strides(sizes), 0);
}

Tensor reduce_grad(const Tensor& grad, IntArrayRef sizes, DType dtype) {
  Tensor g = sum_to(grad, sizes);
  return g.dtype() == dtype ? g : g.to(dtype);
}

}  // namespace cohort::detail
