// where and masked_fill (with backward); allclose and equal. The elementwise comparisons and logic
// ops are rows of the unary and binary op tables (unary.cpp, binary.cpp).
#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"
#include "ops/cpu/kernels.h"
#include "ops/internal.h"

namespace cohort {

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  detail::check_defined("where", condition, "condition");
  COHORT_CHECK_AS(TypeError, condition.dtype() == kBool, "where: expected a bool condition, got ", condition.dtype());
  detail::check_same_device("where", condition, a);
  detail::check_same_device("where", a, b);
  DType dtype = result_type(a, b);
  Shape shape = broadcast_shapes(broadcast_shapes(condition.sizes(), a.sizes(), "where"), b.sizes(), "where");
  Tensor out = detail::make_empty(shape, dtype, a.device());
  kernel::where(out, condition, detail::cast_nograd(a, dtype), detail::cast_nograd(b, dtype));
  Shape as = a.sizes().vec(), bs = b.sizes().vec();
  DType at = a.dtype(), bt = b.dtype();
  bool a_grad = a.requires_grad(), b_grad = b.requires_grad();
  return autograd::record("WhereBackward0", out, {a, b}, [=](const Tensor& g) {
    Tensor zero = zeros({}, g.options());
    return std::vector<Tensor>{a_grad ? detail::reduce_grad(where(condition, g, zero), as, at) : Tensor(),
                               b_grad ? detail::reduce_grad(where(condition, zero, g), bs, bt) : Tensor()};
  });
}

Tensor where(const Tensor& condition, const Tensor& a, const Scalar& b) {
  return where(condition, a, detail::scalar_to_tensor(b, result_type(a, b), a.device()));
}

Tensor where(const Tensor& condition, const Scalar& a, const Tensor& b) {
  return where(condition, detail::scalar_to_tensor(a, result_type(b, a), b.device()), b);
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, const Scalar& value) {
  detail::check_defined("masked_fill", x);
  COHORT_CHECK_AS(TypeError, mask.dtype() == kBool, "masked_fill: expected a bool mask, got ", mask.dtype());
  Shape shape = broadcast_shapes(x.sizes(), mask.sizes(), "masked_fill");
  COHORT_CHECK(shape == x.sizes().vec(), "masked_fill: the mask of shape ", mask.sizes(),
               " must broadcast to the tensor's shape ", x.sizes());
  return where(mask, detail::scalar_to_tensor(value, x.dtype(), x.device()), x);
}

Tensor Tensor::masked_fill(const Tensor& mask, const Scalar& value) const { return cohort::masked_fill(*this, mask, value); }

const Tensor& Tensor::masked_fill_(const Tensor& mask, const Scalar& value) const {
  Tensor result = cohort::masked_fill(*this, mask, value);
  detail::check_inplace("masked_fill_", *this, result.requires_grad());
  {
    NoGradGuard g;
    kernel::copy(*this, result);
  }
  detail::rebase_history(*this, result);
  unsafe_impl()->storage()->bump_version();
  return *this;
}

bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol, bool equal_nan) {
  NoGradGuard no_grad;
  detail::check_defined("allclose", a, "first");
  detail::check_defined("allclose", b, "second");
  broadcast_shapes(a.sizes(), b.sizes(), "allclose");
  Tensor x = a.to(kFloat64), y = b.to(kFloat64);
  Tensor close = abs(x - y) <= atol + rtol * abs(y);
  close = logical_or(close, x == y);  // equal infinities
  if (equal_nan) close = logical_or(close, logical_and(isnan(x), isnan(y)));
  return close.logical_not().sum().item<int64_t>() == 0;
}

bool equal(const Tensor& a, const Tensor& b) {
  NoGradGuard no_grad;
  detail::check_defined("equal", a, "first");
  detail::check_defined("equal", b, "second");
  if (a.sizes() != b.sizes()) return false;
  return ne(a, b).sum().item<int64_t>() == 0;
}

}  // namespace cohort
