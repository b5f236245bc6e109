// Broadcasting binary arithmetic (add, sub, mul, div, pow, maximum, minimum) with type promotion,
// scalar operands, in-place and out= forms, and their backward.
#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"
#include "ops/cpu/kernels.h"
#include "ops/internal.h"

namespace cohort {

using autograd::SavedTensor;
using kernel::BinaryOp;

namespace {

// Note [Type promotion]
// Operands rank as dimensioned tensors > 0-d tensors > plain numbers. A lower-ranked operand
// changes the result only when it is of a higher kind (bool < integer < floating): float32 tensor
// + float64 0-d tensor is float32, int tensor + 2.5 is the default float dtype.
DType combine_categories(DType higher, DType lower) {
  if (is_floating_point(higher)) return higher;
  if (higher == kBool || is_floating_point(lower)) return promote_types(higher, lower);
  return higher;
}

DType scalar_category_dtype(const Scalar& s) {
  return s.is_floating_point() ? get_default_dtype() : s.is_integral() ? kInt64 : kBool;
}

const char* op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::Add: return "add";
    case BinaryOp::Sub: return "sub";
    case BinaryOp::Mul: return "mul";
    case BinaryOp::Div: return "div";
    case BinaryOp::Pow: return "pow";
    case BinaryOp::Maximum: return "maximum";
    case BinaryOp::Minimum: return "minimum";
    default: return "binary";
  }
}

// The compute dtype of an arithmetic op on a and b (true division gives floats).
DType compute_dtype(BinaryOp op, DType promoted) {
  if ((op == BinaryOp::Div) && !is_floating_point(promoted)) return get_default_dtype();
  return promoted;
}

void check_sub_bool(BinaryOp op, DType t) {
  COHORT_CHECK_AS(TypeError, !(op == BinaryOp::Sub && t == kBool),
                  "sub: subtraction of bool tensors is not supported; hint: use logical_xor or convert to an integer dtype");
}

// The forward of every arithmetic op: promote, broadcast, allocate, run the kernel.
Tensor forward(BinaryOp op, const Tensor& a, const Tensor& b, DType dtype, const Scalar& alpha) {
  const char* name = op_name(op);
  detail::check_same_device(name, a, b);
  check_sub_bool(op, dtype);
  Shape shape = broadcast_shapes(a.sizes(), b.sizes(), name);
  Tensor out = detail::make_empty(shape, dtype, a.device());
  kernel::binary(op, out, detail::cast_nograd(a, dtype), detail::cast_nograd(b, dtype), alpha);
  return out;
}

// Records the backward of op(a, b) = out. b_is_scalar: b is a wrapped number (no gradient).
// scalar_b: b is a plain number (libtorch names those nodes ...Backward1, pow's ...Backward0).
Tensor record_binary(BinaryOp op, Tensor out, const Tensor& a, const Tensor& b, const Scalar& alpha,
                     bool scalar_b = false) {
  Shape as = a.sizes().vec(), bs = b.sizes().vec();
  DType at = a.dtype(), bt = b.dtype();
  bool a_grad = a.requires_grad(), b_grad = b.requires_grad();
  switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Sub: {
      double sign = op == BinaryOp::Add ? alpha.to_double() : -alpha.to_double();
      return autograd::record(op == BinaryOp::Add ? (scalar_b ? "AddBackward1" : "AddBackward0")
                                                    : (scalar_b ? "SubBackward1" : "SubBackward0"), out, {a, b},
                              [=](const Tensor& g) {
                                return std::vector<Tensor>{
                                    a_grad ? detail::reduce_grad(g, as, at) : Tensor(),
                                    b_grad ? detail::reduce_grad(sign == 1 ? g : g * sign, bs, bt) : Tensor()};
                              });
    }
    case BinaryOp::Mul:
      return autograd::record(scalar_b ? "MulBackward1" : "MulBackward0", out, {a, b}, [=, sa = SavedTensor(b_grad ? a : Tensor()),
                                                           sb = SavedTensor(a_grad ? b : Tensor())](const Tensor& g) {
        return std::vector<Tensor>{a_grad ? detail::reduce_grad(g * sb.unpack(), as, at) : Tensor(),
                                   b_grad ? detail::reduce_grad(g * sa.unpack(), bs, bt) : Tensor()};
      });
    case BinaryOp::Div:
      return autograd::record(scalar_b ? "DivBackward1" : "DivBackward0", out, {a, b}, [=, sa = SavedTensor(b_grad ? a : Tensor()),
                                                           sb = SavedTensor(b)](const Tensor& g) {
        Tensor bv = sb.unpack();
        return std::vector<Tensor>{a_grad ? detail::reduce_grad(g / bv, as, at) : Tensor(),
                                   b_grad ? detail::reduce_grad(-g * sa.unpack() / (bv * bv), bs, bt) : Tensor()};
      });
    case BinaryOp::Pow:
      return autograd::record(scalar_b ? "PowBackward0" : "PowBackward1", out, {a, b},
                              [=, sa = SavedTensor(a), sb = SavedTensor(b), so = SavedTensor(out, true)](const Tensor& g) {
        Tensor av = sa.unpack(), bv = sb.unpack();
        Tensor ga, gb;
        if (a_grad) ga = detail::reduce_grad(where(bv == 0, zeros_like(g), g * bv * pow(av, bv - 1)), as, at);
        if (b_grad) gb = detail::reduce_grad(where(logical_and(av == 0, bv >= 0), zeros_like(g), g * so.unpack() * log(av)), bs, bt);
        return std::vector<Tensor>{ga, gb};
      });
    case BinaryOp::Maximum:
    case BinaryOp::Minimum:
      return autograd::record(op == BinaryOp::Maximum ? "MaximumBackward0" : "MinimumBackward0", out, {a, b},
                              [=, sa = SavedTensor(a), sb = SavedTensor(b)](const Tensor& g) {
        Tensor av = sa.unpack(), bv = sb.unpack();
        Tensor a_wins = op == BinaryOp::Maximum ? (av > bv) : (av < bv);
        Tensor tie = (av == bv).to(g.dtype()) * 0.5;
        Tensor wa = a_wins.to(g.dtype()) + tie;
        return std::vector<Tensor>{a_grad ? detail::reduce_grad(g * wa, as, at) : Tensor(),
                                   b_grad ? detail::reduce_grad(g * (1 - wa), bs, bt) : Tensor()};
      });
    default: return out;
  }
}

Tensor binary_op(BinaryOp op, const Tensor& a, const Tensor& b, const Scalar& alpha = 1) {
  detail::check_defined(op_name(op), a, "first");
  detail::check_defined(op_name(op), b, "second");
  DType dtype = compute_dtype(op, result_type(a, b));
  return record_binary(op, forward(op, a, b, dtype, alpha), a, b, alpha);
}

Tensor binary_op(BinaryOp op, const Tensor& a, const Scalar& b, const Scalar& alpha = 1) {
  detail::check_defined(op_name(op), a, "first");
  DType dtype = compute_dtype(op, result_type(a, b));
  Tensor bt = detail::scalar_to_tensor(b, dtype, a.device());
  return record_binary(op, forward(op, a, bt, dtype, alpha), a, bt, alpha, /*scalar_b=*/true);
}

// In place: self = op(self, b). Without a graph the kernel writes into self directly.
const Tensor& binary_inplace(BinaryOp op, const Tensor& self, const Tensor& b, const Scalar& alpha) {
  const char* name = op_name(op);
  detail::check_defined(name, self, "self");
  DType dtype = compute_dtype(op, result_type(self, b));
  COHORT_CHECK_AS(TypeError, can_cast(dtype, self.dtype()), name, "_: result type ", dtype,
                  " can't be cast to the desired output type ", self.dtype());
  Shape shape = broadcast_shapes(self.sizes(), b.sizes(), name);
  COHORT_CHECK(shape == self.sizes().vec(), name, "_: output with shape ", self.sizes(),
               " doesn't match the broadcast shape ", IntArrayRef(shape));
  bool graph = autograd::needs_grad({self, b});
  detail::check_inplace(name, self, graph);
  if (graph) {
    // Computed from a copy of the old values: the op may save them for backward, and self is
    // about to be overwritten.
    Tensor result = binary_op(op, cohort::clone(self), b, alpha);
    { NoGradGuard g; kernel::copy(self, result); }
    self.unsafe_impl()->storage()->bump_version();
    detail::rebase_history(self, result);
    return self;
  }
  detail::check_same_device(name, self, b);
  check_sub_bool(op, dtype);
  if (dtype == self.dtype()) {
    kernel::binary(op, self, self, detail::cast_nograd(b, dtype), alpha);
  } else {
    Tensor tmp = forward(op, self, b, dtype, alpha);
    kernel::copy(self, tmp);
  }
  self.unsafe_impl()->storage()->bump_version();
  return self;
}

Tensor& binary_out(BinaryOp op, Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  const char* name = op_name(op);
  detail::check_defined(name, a, "first");
  detail::check_defined(name, b, "second");
  DType dtype = compute_dtype(op, result_type(a, b));
  Shape shape = broadcast_shapes(a.sizes(), b.sizes(), name);
  detail::resize_out(name, out, shape, dtype);
  detail::check_same_device(name, out, a);
  Tensor result = forward(op, a, b, dtype, alpha);
  kernel::copy(out, result);
  out.unsafe_impl()->storage()->bump_version();
  return out;
}

}  // namespace

DType result_type(const Tensor& a, const Tensor& b) {
  bool a_dim = a.dim() > 0, b_dim = b.dim() > 0;
  if (a_dim == b_dim) return promote_types(a.dtype(), b.dtype());
  return a_dim ? combine_categories(a.dtype(), b.dtype()) : combine_categories(b.dtype(), a.dtype());
}

DType result_type(const Tensor& a, const Scalar& b) { return combine_categories(a.dtype(), scalar_category_dtype(b)); }

Tensor add(const Tensor& a, const Tensor& b, const Scalar& alpha) { return binary_op(BinaryOp::Add, a, b, alpha); }
Tensor add(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  return binary_op(BinaryOp::Add, a, b.is_floating_point() || alpha.is_floating_point()
                                         ? Scalar(b.to_double() * alpha.to_double()) : Scalar(b.to_long() * alpha.to_long()));
}
Tensor sub(const Tensor& a, const Tensor& b, const Scalar& alpha) { return binary_op(BinaryOp::Sub, a, b, alpha); }
Tensor sub(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  return binary_op(BinaryOp::Sub, a, b.is_floating_point() || alpha.is_floating_point()
                                         ? Scalar(b.to_double() * alpha.to_double()) : Scalar(b.to_long() * alpha.to_long()));
}
Tensor mul(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Mul, a, b); }
Tensor mul(const Tensor& a, const Scalar& b) { return binary_op(BinaryOp::Mul, a, b); }
Tensor div(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Div, a, b); }
Tensor div(const Tensor& a, const Scalar& b) { return binary_op(BinaryOp::Div, a, b); }
Tensor pow(const Tensor& a, const Tensor& exponent) { return binary_op(BinaryOp::Pow, a, exponent); }
Tensor pow(const Tensor& a, const Scalar& exponent) { return binary_op(BinaryOp::Pow, a, exponent); }
Tensor pow(const Scalar& a, const Tensor& exponent) {
  DType dtype = result_type(exponent, a);
  return binary_op(BinaryOp::Pow, detail::scalar_to_tensor(a, dtype, exponent.device()), exponent);
}
Tensor maximum(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Maximum, a, b); }
Tensor minimum(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Minimum, a, b); }

Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) { return binary_out(BinaryOp::Add, out, a, b, alpha); }
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) { return binary_out(BinaryOp::Sub, out, a, b, alpha); }
Tensor& mul_out(Tensor& out, const Tensor& a, const Tensor& b) { return binary_out(BinaryOp::Mul, out, a, b, 1); }
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b) { return binary_out(BinaryOp::Div, out, a, b, 1); }

const Tensor& Tensor::add_(const Tensor& other, const Scalar& alpha) const { return binary_inplace(BinaryOp::Add, *this, other, alpha); }
const Tensor& Tensor::sub_(const Tensor& other, const Scalar& alpha) const { return binary_inplace(BinaryOp::Sub, *this, other, alpha); }
const Tensor& Tensor::mul_(const Tensor& other) const { return binary_inplace(BinaryOp::Mul, *this, other, 1); }
const Tensor& Tensor::div_(const Tensor& other) const { return binary_inplace(BinaryOp::Div, *this, other, 1); }
const Tensor& Tensor::add_(const Scalar& other, const Scalar& alpha) const {
  return add_(detail::scalar_to_tensor(other, result_type(*this, other), device()), alpha);
}
const Tensor& Tensor::sub_(const Scalar& other, const Scalar& alpha) const {
  return sub_(detail::scalar_to_tensor(other, result_type(*this, other), device()), alpha);
}
const Tensor& Tensor::mul_(const Scalar& other) const { return mul_(detail::scalar_to_tensor(other, result_type(*this, other), device())); }
const Tensor& Tensor::div_(const Scalar& other) const {
  return div_(detail::scalar_to_tensor(other, compute_dtype(BinaryOp::Div, result_type(*this, other)), device()));
}
const Tensor& Tensor::pow_(const Scalar& exponent) const {
  return binary_inplace(BinaryOp::Pow, *this, detail::scalar_to_tensor(exponent, result_type(*this, exponent), device()), 1);
}

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator+(const Tensor& a, const Scalar& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Scalar& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Scalar& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Scalar& b) { return div(a, b); }
Tensor operator+(const Scalar& a, const Tensor& b) { return add(b, a); }
Tensor operator-(const Scalar& a, const Tensor& b) { return add(neg(b), a); }
Tensor operator*(const Scalar& a, const Tensor& b) { return mul(b, a); }
Tensor operator/(const Scalar& a, const Tensor& b) {
  return div(detail::scalar_to_tensor(a, compute_dtype(BinaryOp::Div, result_type(b, a)), b.device()), b);
}

}  // namespace cohort
