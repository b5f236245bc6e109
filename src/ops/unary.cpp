// Unary math (neg, exp, log, sqrt, abs, relu, sigmoid, tanh, ...) with backward, in-place and out=
// forms, and the bool-valued logical_not, isnan, isfinite: one table row per op (Note [Op tables] in
// cpu/kernels.h). Float-valued ops promote integer inputs to the default dtype. Then clamp, with
// scalar and with tensor bounds.
#include <cmath>
#include <limits>

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/shape.h"
#include "ops/cpu/kernels.h"
#include "ops/internal.h"
#include "cohort/autograd/trace.h"

namespace cohort {

using autograd::SavedTensor;
using kernel::UnaryOp;

namespace {

using Arg = const Tensor&;

// What a backward formula reads besides the gradient (a bit set).
struct Saves {
  static constexpr unsigned Nothing = 0, Input = 1, Output = 2;
};

// The result's dtype: the input's; the default float dtype for integer inputs; bool.
enum class Result { Same, Float, Bool };

struct UnaryInfo {
  UnaryOp op;
  const char* name;
  const char* node;  // the backward node; nullptr: no gradient
  Result result;
  unsigned saves;
  // d out / d x given the gradient g, the input x and the output y (each undefined unless saved).
  Tensor (*derivative)(Arg g, Arg x, Arg y);
};

constexpr UnaryInfo kUnary[] = {
    {UnaryOp::Neg, "neg", "NegBackward0", Result::Same, Saves::Nothing, [](Arg g, Arg, Arg) { return -g; }},
    {UnaryOp::Exp, "exp", "ExpBackward0", Result::Float, Saves::Output, [](Arg g, Arg, Arg y) { return g * y; }},
    {UnaryOp::Log, "log", "LogBackward0", Result::Float, Saves::Input, [](Arg g, Arg x, Arg) { return g / x; }},
    {UnaryOp::Sqrt, "sqrt", "SqrtBackward0", Result::Float, Saves::Output, [](Arg g, Arg, Arg y) { return g / (y * 2); }},
    {UnaryOp::Rsqrt, "rsqrt", "RsqrtBackward0", Result::Float, Saves::Output,
     [](Arg g, Arg, Arg y) { return g * y * y * y * -0.5; }},
    {UnaryOp::Abs, "abs", "AbsBackward0", Result::Same, Saves::Input, [](Arg g, Arg x, Arg) { return g * sign(x); }},
    {UnaryOp::Sign, "sign", "SignBackward0", Result::Same, Saves::Nothing, [](Arg g, Arg, Arg) { return zeros_like(g); }},
    {UnaryOp::Relu, "relu", "ReluBackward0", Result::Same, Saves::Output,
     [](Arg g, Arg, Arg y) { return threshold_backward(g, y, 0); }},
    {UnaryOp::Sigmoid, "sigmoid", "SigmoidBackward0", Result::Float, Saves::Output,
     [](Arg g, Arg, Arg y) { return g * y * (1 - y); }},
    {UnaryOp::Tanh, "tanh", "TanhBackward0", Result::Float, Saves::Output, [](Arg g, Arg, Arg y) { return g * (1 - y * y); }},
    {UnaryOp::Square, "square", "PowBackward0", Result::Same, Saves::Input, [](Arg g, Arg x, Arg) { return g * x * 2; }},
    {UnaryOp::Reciprocal, "reciprocal", "ReciprocalBackward0", Result::Float, Saves::Output,
     [](Arg g, Arg, Arg y) { return -g * y * y; }},
    {UnaryOp::Sin, "sin", "SinBackward0", Result::Float, Saves::Input, [](Arg g, Arg x, Arg) { return g * cos(x); }},
    {UnaryOp::Cos, "cos", "CosBackward0", Result::Float, Saves::Input, [](Arg g, Arg x, Arg) { return -g * sin(x); }},
    {UnaryOp::Erf, "erf", "ErfBackward0", Result::Float, Saves::Input,
     [](Arg g, Arg x, Arg) { return g * exp(-x * x) * (2.0 / std::sqrt(M_PI)); }},
    {UnaryOp::Log1p, "log1p", "Log1pBackward0", Result::Float, Saves::Input, [](Arg g, Arg x, Arg) { return g / (x + 1); }},
    {UnaryOp::LogicalNot, "logical_not", nullptr, Result::Bool, Saves::Nothing, nullptr},
    {UnaryOp::IsNan, "isnan", nullptr, Result::Bool, Saves::Nothing, nullptr},
    {UnaryOp::IsFinite, "isfinite", nullptr, Result::Bool, Saves::Nothing, nullptr},
};
static_assert(kernel::is_op_table<UnaryOp>(kUnary), "kUnary: one row per UnaryOp, in enum order");

const UnaryInfo& info(UnaryOp op) { return kUnary[static_cast<size_t>(op)]; }

// The dtype the kernel computes in (the input's, or the default float dtype) and the result's.
DType compute_dtype(const UnaryInfo& u, DType in) {
  if (u.result == Result::Float && !is_floating_point(in)) return get_default_dtype();
  COHORT_CHECK_AS(TypeError, !(u.op == UnaryOp::Neg && in == kBool),
                  "neg: negation of a bool tensor is not supported; hint: use logical_not");
  return in;
}
DType result_dtype(const UnaryInfo& u, DType compute) { return u.result == Result::Bool ? kBool : compute; }

Tensor unary_op(UnaryOp op, const Tensor& x) {
  const UnaryInfo& u = info(op);
  trace::OpScope trace(u.name);
  detail::check_defined(u.name, x);
  DType dtype = compute_dtype(u, x.dtype());
  Tensor out = detail::make_empty(x.sizes(), result_dtype(u, dtype), x.device());
  kernel::unary(op, out, detail::cast_nograd(x, dtype));
  if (trace) trace.record({x}, out);
  if (!u.derivative || !autograd::needs_grad({x})) return out;
  DType in_dtype = x.dtype();
  return autograd::record(u.node, out, {x},
                          [derivative = u.derivative, in_dtype, sx = SavedTensor(u.saves & Saves::Input ? x : Tensor()),
                           sy = SavedTensor(u.saves & Saves::Output ? out : Tensor(), true)](const Tensor& g) {
                            Tensor d = derivative(g, sx.unpack(), sy.unpack());
                            return std::vector<Tensor>{d.dtype() == in_dtype ? d : d.to(in_dtype)};
                          });
}

const Tensor& unary_inplace(UnaryOp op, const Tensor& self) {
  const UnaryInfo& u = info(op);
  trace::OpScope trace(u.name);
  detail::check_defined(u.name, self);
  DType dtype = result_dtype(u, compute_dtype(u, self.dtype()));
  COHORT_CHECK_AS(TypeError, dtype == self.dtype(), u.name, "_: result type ", dtype,
                  " can't be cast to the desired output type ", self.dtype());
  bool graph = autograd::needs_grad({self});
  detail::check_inplace(u.name, self, graph);
  if (graph) {
    // self is about to be overwritten: an op that saves its input for backward gets a copy; one that
    // saves only its output (relu_, exp_, sigmoid_, ...) reads self directly and saves a new tensor.
    Tensor result = unary_op(op, u.saves & Saves::Input ? cohort::clone(self) : self);
    {
      NoGradGuard g;
      kernel::copy(self, result);
    }
    detail::rebase_history(self, result);
  } else {
    kernel::unary(op, self, self);
  }
  self.unsafe_impl()->storage()->bump_version();
  if (trace) trace.record({self}, self);  // the tensor now holds a new value
  return self;
}

Tensor& unary_out(UnaryOp op, Tensor& out, const Tensor& x) {
  const UnaryInfo& u = info(op);
  detail::check_defined(u.name, x);
  DType dtype = compute_dtype(u, x.dtype()), result = result_dtype(u, dtype);
  detail::resize_out(u.name, out, x.sizes(), result);
  if (out.dtype() == result) kernel::unary(op, out, detail::cast_nograd(x, dtype));
  else kernel::copy(out, unary_op(op, x));
  out.unsafe_impl()->storage()->bump_version();
  return out;
}

}  // namespace

Tensor neg(const Tensor& x) { return unary_op(UnaryOp::Neg, x); }
Tensor exp(const Tensor& x) { return unary_op(UnaryOp::Exp, x); }
Tensor log(const Tensor& x) { return unary_op(UnaryOp::Log, x); }
Tensor sqrt(const Tensor& x) { return unary_op(UnaryOp::Sqrt, x); }
Tensor rsqrt(const Tensor& x) { return unary_op(UnaryOp::Rsqrt, x); }
Tensor abs(const Tensor& x) { return unary_op(UnaryOp::Abs, x); }
Tensor sign(const Tensor& x) { return unary_op(UnaryOp::Sign, x); }
Tensor relu(const Tensor& x) { return unary_op(UnaryOp::Relu, x); }
Tensor sigmoid(const Tensor& x) { return unary_op(UnaryOp::Sigmoid, x); }
Tensor tanh(const Tensor& x) { return unary_op(UnaryOp::Tanh, x); }
Tensor square(const Tensor& x) { return unary_op(UnaryOp::Square, x); }
Tensor reciprocal(const Tensor& x) { return unary_op(UnaryOp::Reciprocal, x); }
Tensor sin(const Tensor& x) { return unary_op(UnaryOp::Sin, x); }
Tensor cos(const Tensor& x) { return unary_op(UnaryOp::Cos, x); }
Tensor erf(const Tensor& x) { return unary_op(UnaryOp::Erf, x); }
Tensor log1p(const Tensor& x) { return unary_op(UnaryOp::Log1p, x); }
Tensor logical_not(const Tensor& x) { return unary_op(UnaryOp::LogicalNot, x); }
Tensor isnan(const Tensor& x) { return unary_op(UnaryOp::IsNan, x); }
Tensor isfinite(const Tensor& x) { return unary_op(UnaryOp::IsFinite, x); }
Tensor operator!(const Tensor& x) { return logical_not(x); }
Tensor& exp_out(Tensor& out, const Tensor& x) { return unary_out(UnaryOp::Exp, out, x); }
Tensor& relu_out(Tensor& out, const Tensor& x) { return unary_out(UnaryOp::Relu, out, x); }

const Tensor& Tensor::neg_() const { return unary_inplace(UnaryOp::Neg, *this); }
const Tensor& Tensor::exp_() const { return unary_inplace(UnaryOp::Exp, *this); }
const Tensor& Tensor::log_() const { return unary_inplace(UnaryOp::Log, *this); }
const Tensor& Tensor::sqrt_() const { return unary_inplace(UnaryOp::Sqrt, *this); }
const Tensor& Tensor::abs_() const { return unary_inplace(UnaryOp::Abs, *this); }
const Tensor& Tensor::relu_() const { return unary_inplace(UnaryOp::Relu, *this); }
const Tensor& Tensor::sigmoid_() const { return unary_inplace(UnaryOp::Sigmoid, *this); }
const Tensor& Tensor::tanh_() const { return unary_inplace(UnaryOp::Tanh, *this); }

Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold) {
  const char* op = "threshold_backward";
  detail::check_defined(op, grad_output, "grad_output");
  detail::check_defined(op, self, "self");
  detail::check_same_device(op, grad_output, self);
  COHORT_CHECK_AS(TypeError, grad_output.dtype() == self.dtype() && is_floating_point(self.dtype()), op,
                  ": expected grad_output and self of one floating dtype, got ", grad_output.dtype(), " and ",
                  self.dtype());
  Shape shape = broadcast_shapes(grad_output.sizes(), self.sizes(), op);
  Tensor out = detail::make_empty(shape, self.dtype(), self.device());
  kernel::threshold_backward(out, grad_output, self, threshold);
  // d/d grad_output is the same mask; self only moves where the mask flips (zero almost everywhere).
  const bool g_grad = grad_output.requires_grad(), s_grad = self.requires_grad();
  return autograd::record("ThresholdBackwardBackward0", out, {grad_output, self},
                          [=, ss = SavedTensor(self), gs = grad_output.sizes().vec(), s_sizes = self.sizes().vec(),
                           dtype = self.dtype()](const Tensor& gg) {
    return std::vector<Tensor>{g_grad ? detail::reduce_grad(threshold_backward(gg, ss.unpack(), threshold), gs, dtype)
                                      : Tensor(),
                               s_grad ? zeros(s_sizes, gg.options()) : Tensor()};
  });
}

namespace {

bool is_nan(const Scalar& s) { return s.is_floating_point() && std::isnan(s.to<double>()); }

// clamp with scalar bounds. nan_bound_fills: a NaN bound makes every element NaN (clamp with both
// bounds, clamp_min, clamp_max); otherwise a NaN bound, which no element is below or above, leaves x
// as it is (clamp with one bound). These are PyTorch 1.13's rules.
Tensor clamp_scalar(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max, bool nan_bound_fills) {
  detail::check_defined("clamp", x);
  COHORT_CHECK(min || max, "clamp: at least one of min and max must be given");
  COHORT_CHECK_AS(TypeError, x.dtype() != kBool, "clamp: not supported for bool tensors");
  DType dtype = x.dtype();
  if (!is_floating_point(dtype) && ((min && min->is_floating_point()) || (max && max->is_floating_point())))
    dtype = get_default_dtype();
  Tensor out = detail::make_empty(x.sizes(), dtype, x.device());
  if (nan_bound_fills && ((min && is_nan(*min)) || (max && is_nan(*max))))
    kernel::fill(out, std::numeric_limits<double>::quiet_NaN());
  else
    kernel::clamp(out, detail::cast_nograd(x, dtype), min, max);
  // x >= NaN and x <= NaN are false: no gradient flows through a NaN bound, nor at a NaN input.
  return autograd::record("ClampBackward1", out, {x}, [min, max, sx = SavedTensor(x)](const Tensor& g) {
    Tensor xv = sx.unpack();
    Tensor keep = ones_like(xv, kBool);
    if (min) keep = logical_and(keep, xv >= *min);
    if (max) keep = logical_and(keep, xv <= *max);
    return std::vector<Tensor>{where(keep, g, zeros_like(g))};
  });
}

}  // namespace

Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max) {
  return clamp_scalar(x, min, max, /*nan_bound_fills=*/min && max);
}
Tensor clamp_min(const Tensor& x, const Scalar& min) { return clamp_scalar(x, min, std::nullopt, true); }
Tensor clamp_max(const Tensor& x, const Scalar& max) { return clamp_scalar(x, std::nullopt, max, true); }

// Tensor bounds: maximum then minimum (NaN-propagating, and max wins where min > max), with
// PyTorch's gradients: x where min <= x <= max, min where x < min (and min < max), max where x > max
// (or max < min), each summed back to its shape.
Tensor clamp(const Tensor& x, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  detail::check_defined("clamp", x);
  const Tensor lo = min ? *min : Tensor(), hi = max ? *max : Tensor();
  COHORT_CHECK(lo.defined() || hi.defined(), "clamp: at least one of min and max must be given");
  COHORT_CHECK_AS(TypeError, x.dtype() != kBool && (!lo.defined() || lo.dtype() != kBool) &&
                                 (!hi.defined() || hi.dtype() != kBool),
                  "clamp: not supported for bool tensors");
  Tensor out;
  {
    NoGradGuard no_grad;
    out = x;
    if (lo.defined()) out = maximum(out, lo);
    if (hi.defined()) out = minimum(out, hi);
  }
  auto sizes_of = [](const Tensor& t) { return t.defined() ? t.sizes().vec() : Shape{}; };
  auto dtype_of = [&](const Tensor& t) { return t.defined() ? t.dtype() : x.dtype(); };
  return autograd::record("ClampBackward0", out, {x, lo, hi},
                          [sx = SavedTensor(x), slo = SavedTensor(lo), shi = SavedTensor(hi), x_sizes = sizes_of(x),
                           lo_sizes = sizes_of(lo), hi_sizes = sizes_of(hi), x_dtype = x.dtype(),
                           lo_dtype = dtype_of(lo), hi_dtype = dtype_of(hi)](const Tensor& g) {
    const Tensor xv = sx.unpack(), l = slo.unpack(), h = shi.unpack();
    const Tensor zero = zeros({}, g.options());
    Tensor keep_x, to_lo, to_hi;
    if (l.defined() && h.defined()) {
      keep_x = logical_and(xv >= l, xv <= h);
      to_lo = logical_and(xv < l, l < h);
      to_hi = logical_or(xv > h, h < l);
    } else if (l.defined()) {
      keep_x = xv >= l, to_lo = xv < l;
    } else {
      keep_x = xv <= h, to_hi = xv > h;
    }
    auto grad_of = [&](const Tensor& mask, IntArrayRef sizes, DType dtype) {
      return mask.defined() ? detail::reduce_grad(where(mask, g, zero), sizes, dtype) : Tensor();
    };
    return std::vector<Tensor>{grad_of(keep_x, x_sizes, x_dtype), grad_of(to_lo, lo_sizes, lo_dtype),
                               grad_of(to_hi, hi_sizes, hi_dtype)};
  });
}
Tensor clamp_min(const Tensor& x, const Tensor& min) { return clamp(x, min, std::nullopt); }
Tensor clamp_max(const Tensor& x, const Tensor& max) { return clamp(x, std::nullopt, max); }

const Tensor& Tensor::clamp_(std::optional<Scalar> min, std::optional<Scalar> max) const {
  bool graph = autograd::needs_grad({*this});
  detail::check_inplace("clamp_", *this, graph);
  Tensor result = cohort::clamp(graph ? cohort::clone(*this) : *this, min, max);
  COHORT_CHECK_AS(TypeError, result.dtype() == dtype(), "clamp_: result type ", result.dtype(),
                  " can't be cast to the desired output type ", dtype());
  {
    NoGradGuard g;
    kernel::copy(*this, result);
  }
  detail::rebase_history(*this, result);
  unsafe_impl()->storage()->bump_version();
  return *this;
}

}  // namespace cohort
