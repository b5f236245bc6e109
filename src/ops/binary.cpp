// Broadcasting binary ops, one table row per op (Note [Op tables] in cpu/kernels.h): arithmetic
// (add, sub, mul, div, pow, maximum, minimum) with backward, comparisons and logic (bool results,
// no gradient); type promotion, scalar operands, in-place and out= forms.
#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"
#include "ops/cpu/kernels.h"
#include "ops/internal.h"
#include "cohort/autograd/trace.h"

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

using Arg = const Tensor&;

// The result's dtype: the promoted one; the default float dtype for integer inputs; bool.
enum class Result { Same, Float, Bool };

// Which of a, b and the output y a gradient formula reads (a bit set).
struct Reads {
  static constexpr unsigned Nothing = 0, A = 1, B = 2, Out = 4;
};

// The gradient for one input, given the gradient g, the inputs a and b, the output y (each
// undefined unless read) and alpha (add, sub); reduced to the input's shape by the caller.
struct Partial {
  unsigned reads = Reads::Nothing;
  Tensor (*fn)(Arg g, Arg a, Arg b, Arg y, double alpha) = nullptr;
};

struct BinaryInfo {
  BinaryOp op;
  const char* name;
  const char* node;         // the backward node of op(tensor, tensor); nullptr: no gradient
  const char* scalar_node;  // of op(tensor, number): libtorch numbers the overloads
  Result result;
  Partial da, db;
};

// maximum/minimum: the gradient goes to the winner; a tie shares it evenly.
Tensor share_of_a(Arg a_wins, Arg a, Arg b, Arg g) { return a_wins.to(g.dtype()) + (a == b).to(g.dtype()) * 0.5; }

constexpr BinaryInfo kBinary[] = {
    {BinaryOp::Add, "add", "AddBackward0", "AddBackward1", Result::Same,
     {Reads::Nothing, [](Arg g, Arg, Arg, Arg, double) { return g; }},
     {Reads::Nothing, [](Arg g, Arg, Arg, Arg, double alpha) { return alpha == 1 ? g : g * alpha; }}},
    {BinaryOp::Sub, "sub", "SubBackward0", "SubBackward1", Result::Same,
     {Reads::Nothing, [](Arg g, Arg, Arg, Arg, double) { return g; }},
     {Reads::Nothing, [](Arg g, Arg, Arg, Arg, double alpha) { return alpha == -1 ? g : g * -alpha; }}},
    {BinaryOp::Mul, "mul", "MulBackward0", "MulBackward1", Result::Same,
     {Reads::B, [](Arg g, Arg, Arg b, Arg, double) { return g * b; }},
     {Reads::A, [](Arg g, Arg a, Arg, Arg, double) { return g * a; }}},
    {BinaryOp::Div, "div", "DivBackward0", "DivBackward1", Result::Float,
     {Reads::B, [](Arg g, Arg, Arg b, Arg, double) { return g / b; }},
     {Reads::A | Reads::B, [](Arg g, Arg a, Arg b, Arg, double) { return -g * a / (b * b); }}},
    // pow's overloads are numbered the other way round. d/da is 0 where b = 0, and d/db where a = 0
    // and b >= 0 (the formulas give NaN or -inf there).
    {BinaryOp::Pow, "pow", "PowBackward1", "PowBackward0", Result::Same,
     {Reads::A | Reads::B,
      [](Arg g, Arg a, Arg b, Arg, double) { return where(b == 0, zeros_like(g), g * b * pow(a, b - 1)); }},
     {Reads::A | Reads::B | Reads::Out,
      [](Arg g, Arg a, Arg b, Arg y, double) { return where(logical_and(a == 0, b >= 0), zeros_like(g), g * y * log(a)); }}},
    {BinaryOp::Maximum, "maximum", "MaximumBackward0", "MaximumBackward0", Result::Same,
     {Reads::A | Reads::B, [](Arg g, Arg a, Arg b, Arg, double) { return g * share_of_a(a > b, a, b, g); }},
     {Reads::A | Reads::B, [](Arg g, Arg a, Arg b, Arg, double) { return g * (1 - share_of_a(a > b, a, b, g)); }}},
    {BinaryOp::Minimum, "minimum", "MinimumBackward0", "MinimumBackward0", Result::Same,
     {Reads::A | Reads::B, [](Arg g, Arg a, Arg b, Arg, double) { return g * share_of_a(a < b, a, b, g); }},
     {Reads::A | Reads::B, [](Arg g, Arg a, Arg b, Arg, double) { return g * (1 - share_of_a(a < b, a, b, g)); }}},
    {BinaryOp::Eq, "eq", nullptr, nullptr, Result::Bool, {}, {}},
    {BinaryOp::Ne, "ne", nullptr, nullptr, Result::Bool, {}, {}},
    {BinaryOp::Lt, "lt", nullptr, nullptr, Result::Bool, {}, {}},
    {BinaryOp::Le, "le", nullptr, nullptr, Result::Bool, {}, {}},
    {BinaryOp::Gt, "gt", nullptr, nullptr, Result::Bool, {}, {}},
    {BinaryOp::Ge, "ge", nullptr, nullptr, Result::Bool, {}, {}},
    {BinaryOp::And, "logical_and", nullptr, nullptr, Result::Bool, {}, {}},
    {BinaryOp::Or, "logical_or", nullptr, nullptr, Result::Bool, {}, {}},
    // a - b floor(a / b): d/da 1, d/db -floor(a / b), that floor being (a - y) / b exactly.
    {BinaryOp::Remainder, "remainder", "RemainderBackward0", "RemainderBackward1", Result::Same,
     {Reads::Nothing, [](Arg g, Arg, Arg, Arg, double) { return g; }},
     {Reads::A | Reads::B | Reads::Out, [](Arg g, Arg a, Arg b, Arg y, double) { return -g * ((a - y) / b).detach(); }}},
};
static_assert(kernel::is_op_table<BinaryOp>(kBinary), "kBinary: one row per BinaryOp, in enum order");

const BinaryInfo& info(BinaryOp op) { return kBinary[static_cast<size_t>(op)]; }
const char* op_name(BinaryOp op) { return info(op).name; }

// The dtype the kernel computes in, given the promoted one (true division gives floats), and the result's.
DType compute_dtype(BinaryOp op, DType promoted) {
  if (info(op).result == Result::Float && !is_floating_point(promoted)) return get_default_dtype();
  return promoted;
}
DType result_dtype(BinaryOp op, DType compute) { return info(op).result == Result::Bool ? kBool : compute; }

void check_sub_bool(BinaryOp op, DType t) {
  COHORT_CHECK_AS(TypeError, !(op == BinaryOp::Sub && t == kBool),
                  "sub: subtraction of bool tensors is not supported; hint: use logical_xor or convert to an integer dtype");
  COHORT_CHECK_AS(TypeError, !(op == BinaryOp::Remainder && t == kBool),
                  "remainder: bool tensors are not supported; hint: convert them to an integer dtype");
}

// An integer remainder by 0 has no value (floats give NaN, as in PyTorch).
void check_divisor(BinaryOp op, DType t, const Tensor& b) {
  if (op != BinaryOp::Remainder || is_floating_point(t) || t == kBool) return;
  NoGradGuard no_grad;
  COHORT_CHECK(!(b == 0).any().item<bool>(), "remainder: integer division by zero (a divisor of ", b.describe(),
               " is 0); hint: use floating point, or mask the zeros");
}

// The forward of every op: promote, broadcast, allocate, run the kernel.
Tensor forward(BinaryOp op, const Tensor& a, const Tensor& b, DType dtype, const Scalar& alpha) {
  const char* name = op_name(op);
  detail::check_same_device(name, a, b);
  check_sub_bool(op, dtype);
  check_divisor(op, dtype, b);
  Shape shape = broadcast_shapes(a.sizes(), b.sizes(), name);
  Tensor out = detail::make_empty(shape, result_dtype(op, dtype), a.device());
  kernel::binary(op, out, detail::cast_nograd(a, dtype), detail::cast_nograd(b, dtype), alpha);
  return out;
}

// Records the backward of op(a, b) = out. scalar_b: b is a wrapped plain number (no gradient).
// Only the tensors that the needed gradients read are saved.
Tensor record_binary(BinaryOp op, Tensor out, const Tensor& a, const Tensor& b, const Scalar& alpha,
                     bool scalar_b = false) {
  const BinaryInfo& i = info(op);
  if (!i.node || !autograd::needs_grad({a, b})) return out;
  const bool a_grad = a.requires_grad(), b_grad = b.requires_grad();
  const unsigned reads = (a_grad ? i.da.reads : Reads::Nothing) | (b_grad ? i.db.reads : Reads::Nothing);
  Shape as = a.sizes().vec(), bs = b.sizes().vec();
  DType at = a.dtype(), bt = b.dtype();
  return autograd::record(scalar_b ? i.scalar_node : i.node, out, {a, b},
                          [=, da = i.da.fn, db = i.db.fn, alpha = alpha.to_double(),
                           sa = SavedTensor(reads & Reads::A ? a : Tensor()),
                           sb = SavedTensor(reads & Reads::B ? b : Tensor()),
                           so = SavedTensor(reads & Reads::Out ? out : Tensor(), true)](const Tensor& g) {
                            Tensor av = sa.unpack(), bv = sb.unpack(), y = so.unpack();
                            return std::vector<Tensor>{
                                a_grad ? detail::reduce_grad(da(g, av, bv, y, alpha), as, at) : Tensor(),
                                b_grad ? detail::reduce_grad(db(g, av, bv, y, alpha), bs, bt) : Tensor()};
                          });
}

Tensor binary_op(BinaryOp op, const Tensor& a, const Tensor& b, const Scalar& alpha = 1) {
  trace::OpScope trace(op_name(op));
  detail::check_defined(op_name(op), a, "first");
  detail::check_defined(op_name(op), b, "second");
  DType dtype = compute_dtype(op, result_type(a, b));
  Tensor out = forward(op, a, b, dtype, alpha);
  if (trace) trace.record({a, b}, out, {{"alpha", alpha.to_double()}});
  return record_binary(op, out, a, b, alpha);
}

Tensor binary_op(BinaryOp op, const Tensor& a, const Scalar& b, const Scalar& alpha = 1) {
  trace::OpScope trace(op_name(op));
  detail::check_defined(op_name(op), a, "first");
  DType dtype = compute_dtype(op, result_type(a, b));
  Tensor bt = detail::scalar_to_tensor(b, dtype, a.device());
  Tensor out = forward(op, a, bt, dtype, alpha);
  if (trace) trace.record({a, bt}, out, {{"alpha", alpha.to_double()}});
  return record_binary(op, out, a, bt, alpha, /*scalar_b=*/true);
}

// In place: self = op(self, b). Without a graph the kernel writes into self directly.
const Tensor& binary_inplace(BinaryOp op, const Tensor& self, const Tensor& b, const Scalar& alpha) {
  const char* name = op_name(op);
  trace::OpScope trace(name);
  detail::check_defined(name, self, "self");
  DType dtype = compute_dtype(op, result_type(self, b)), result = result_dtype(op, dtype);
  COHORT_CHECK_AS(TypeError, can_cast(result, self.dtype()), name, "_: result type ", result,
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
    if (trace) trace.record({self, b}, self, {{"alpha", alpha.to_double()}});  // self now holds a new value
    return self;
  }
  detail::check_same_device(name, self, b);
  check_sub_bool(op, dtype);
  check_divisor(op, dtype, b);
  if (dtype == self.dtype() && result == self.dtype()) {
    kernel::binary(op, self, self, detail::cast_nograd(b, dtype), alpha);
  } else {
    Tensor tmp = forward(op, self, b, dtype, alpha);
    kernel::copy(self, tmp);
  }
  self.unsafe_impl()->storage()->bump_version();
  if (trace) trace.record({self, b}, self, {{"alpha", alpha.to_double()}});
  return self;
}

Tensor& binary_out(BinaryOp op, Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) {
  const char* name = op_name(op);
  detail::check_defined(name, a, "first");
  detail::check_defined(name, b, "second");
  DType dtype = compute_dtype(op, result_type(a, b));
  Shape shape = broadcast_shapes(a.sizes(), b.sizes(), name);
  detail::resize_out(name, out, shape, result_dtype(op, dtype));
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
Tensor eq(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Ne, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Le, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Ge, a, b); }
Tensor eq(const Tensor& a, const Scalar& b) { return binary_op(BinaryOp::Eq, a, b); }
Tensor ne(const Tensor& a, const Scalar& b) { return binary_op(BinaryOp::Ne, a, b); }
Tensor lt(const Tensor& a, const Scalar& b) { return binary_op(BinaryOp::Lt, a, b); }
Tensor le(const Tensor& a, const Scalar& b) { return binary_op(BinaryOp::Le, a, b); }
Tensor gt(const Tensor& a, const Scalar& b) { return binary_op(BinaryOp::Gt, a, b); }
Tensor ge(const Tensor& a, const Scalar& b) { return binary_op(BinaryOp::Ge, a, b); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::And, a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Or, a, b); }
Tensor remainder(const Tensor& a, const Tensor& b) { return binary_op(BinaryOp::Remainder, a, b); }
Tensor remainder(const Tensor& a, const Scalar& b) { return binary_op(BinaryOp::Remainder, a, b); }
Tensor operator%(const Tensor& a, const Tensor& b) { return remainder(a, b); }
Tensor operator%(const Tensor& a, const Scalar& b) { return remainder(a, b); }

Tensor& add_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) { return binary_out(BinaryOp::Add, out, a, b, alpha); }
Tensor& sub_out(Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha) { return binary_out(BinaryOp::Sub, out, a, b, alpha); }
Tensor& mul_out(Tensor& out, const Tensor& a, const Tensor& b) { return binary_out(BinaryOp::Mul, out, a, b, 1); }
Tensor& div_out(Tensor& out, const Tensor& a, const Tensor& b) { return binary_out(BinaryOp::Div, out, a, b, 1); }

const Tensor& Tensor::add_(const Tensor& other, const Scalar& alpha) const { return binary_inplace(BinaryOp::Add, *this, other, alpha); }
const Tensor& Tensor::sub_(const Tensor& other, const Scalar& alpha) const { return binary_inplace(BinaryOp::Sub, *this, other, alpha); }
const Tensor& Tensor::mul_(const Tensor& other) const { return binary_inplace(BinaryOp::Mul, *this, other, 1); }
const Tensor& Tensor::div_(const Tensor& other) const { return binary_inplace(BinaryOp::Div, *this, other, 1); }
const Tensor& Tensor::remainder_(const Tensor& other) const { return binary_inplace(BinaryOp::Remainder, *this, other, 1); }
const Tensor& Tensor::remainder_(const Scalar& other) const {
  return remainder_(detail::scalar_to_tensor(other, result_type(*this, other), device()));
}
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
Tensor operator==(const Tensor& a, const Tensor& b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Tensor& b) { return ne(a, b); }
Tensor operator<(const Tensor& a, const Tensor& b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Tensor& b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Tensor& b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Tensor& b) { return ge(a, b); }
Tensor operator==(const Tensor& a, const Scalar& b) { return eq(a, b); }
Tensor operator!=(const Tensor& a, const Scalar& b) { return ne(a, b); }
Tensor operator<(const Tensor& a, const Scalar& b) { return lt(a, b); }
Tensor operator<=(const Tensor& a, const Scalar& b) { return le(a, b); }
Tensor operator>(const Tensor& a, const Scalar& b) { return gt(a, b); }
Tensor operator>=(const Tensor& a, const Scalar& b) { return ge(a, b); }

}  // namespace cohort
