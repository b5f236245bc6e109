// Unary math (neg, exp, log, sqrt, abs, relu, sigmoid, tanh, clamp, ...) with backward, in-place
// and out= forms. Float-valued ops promote integer inputs to the default dtype.
#include <cmath>

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/shape.h"
#include "ops/cpu/kernels.h"
#include "ops/internal.h"

namespace cohort {

using autograd::SavedTensor;
using kernel::UnaryOp;

namespace {

struct UnaryInfo {
  const char* name;
  const char* node;
  bool float_valued;  // integer inputs become the default float dtype
};

UnaryInfo info(UnaryOp op) {
  switch (op) {
    case UnaryOp::Neg: return {"neg", "NegBackward0", false};
    case UnaryOp::Exp: return {"exp", "ExpBackward0", true};
    case UnaryOp::Log: return {"log", "LogBackward0", true};
    case UnaryOp::Sqrt: return {"sqrt", "SqrtBackward0", true};
    case UnaryOp::Rsqrt: return {"rsqrt", "RsqrtBackward0", true};
    case UnaryOp::Abs: return {"abs", "AbsBackward0", false};
    case UnaryOp::Sign: return {"sign", "SignBackward0", false};
    case UnaryOp::Relu: return {"relu", "ReluBackward0", false};
    case UnaryOp::Sigmoid: return {"sigmoid", "SigmoidBackward0", true};
    case UnaryOp::Tanh: return {"tanh", "TanhBackward0", true};
    case UnaryOp::Square: return {"square", "PowBackward0", false};
    case UnaryOp::Reciprocal: return {"reciprocal", "ReciprocalBackward0", true};
    case UnaryOp::Sin: return {"sin", "SinBackward0", true};
    case UnaryOp::Cos: return {"cos", "CosBackward0", true};
    case UnaryOp::Erf: return {"erf", "ErfBackward0", true};
    case UnaryOp::Log1p: return {"log1p", "Log1pBackward0", true};
    default: return {"unary", "UnaryBackward", false};
  }
}

// d out / d x, given the gradient g, the input x and the output y.
Tensor derivative(UnaryOp op, const Tensor& g, const Tensor& x, const Tensor& y) {
  switch (op) {
    case UnaryOp::Neg: return -g;
    case UnaryOp::Exp: return g * y;
    case UnaryOp::Log: return g / x;
    case UnaryOp::Sqrt: return g / (y * 2);
    case UnaryOp::Rsqrt: return g * y * y * y * -0.5;
    case UnaryOp::Abs: return g * sign(x);
    case UnaryOp::Sign: return zeros_like(g);
    case UnaryOp::Relu: return threshold_backward(g, y, 0);  // one pass; was where(y > 0, g, zeros_like(g))
    case UnaryOp::Sigmoid: return g * y * (1 - y);
    case UnaryOp::Tanh: return g * (1 - y * y);
    case UnaryOp::Square: return g * x * 2;
    case UnaryOp::Reciprocal: return -g * y * y;
    case UnaryOp::Sin: return g * cos(x);
    case UnaryOp::Cos: return -g * sin(x);
    case UnaryOp::Erf: return g * exp(-x * x) * (2.0 / std::sqrt(M_PI));
    case UnaryOp::Log1p: return g / (x + 1);
    default: return Tensor();
  }
}

// Which saved values a derivative reads.
bool needs_input(UnaryOp op) {
  return op == UnaryOp::Log || op == UnaryOp::Abs || op == UnaryOp::Square || op == UnaryOp::Sin || op == UnaryOp::Cos ||
         op == UnaryOp::Erf || op == UnaryOp::Log1p;
}
bool needs_output(UnaryOp op) {
  return op == UnaryOp::Exp || op == UnaryOp::Sqrt || op == UnaryOp::Rsqrt || op == UnaryOp::Relu ||
         op == UnaryOp::Sigmoid || op == UnaryOp::Tanh || op == UnaryOp::Reciprocal;
}

DType out_dtype(UnaryOp op, DType in) {
  UnaryInfo i = info(op);
  if (i.float_valued && !is_floating_point(in)) return get_default_dtype();
  COHORT_CHECK_AS(TypeError, !(op == UnaryOp::Neg && in == kBool),
                  "neg: negation of a bool tensor is not supported; hint: use logical_not");
  return in;
}

Tensor unary_op(UnaryOp op, const Tensor& x) {
  UnaryInfo i = info(op);
  detail::check_defined(i.name, x);
  DType dtype = out_dtype(op, x.dtype());
  Tensor out = detail::make_empty(x.sizes(), dtype, x.device());
  kernel::unary(op, out, detail::cast_nograd(x, dtype));
  if (!autograd::needs_grad({x})) return out;
  DType in_dtype = x.dtype();
  return autograd::record(i.node, out, {x},
                          [op, in_dtype, sx = SavedTensor(needs_input(op) ? x : Tensor()),
                           sy = SavedTensor(needs_output(op) ? out : Tensor(), true)](const Tensor& g) {
                            Tensor d = derivative(op, g, sx.unpack(), sy.unpack());
                            return std::vector<Tensor>{d.dtype() == in_dtype ? d : d.to(in_dtype)};
                          });
}

const Tensor& unary_inplace(UnaryOp op, const Tensor& self) {
  UnaryInfo i = info(op);
  detail::check_defined(i.name, self);
  DType dtype = out_dtype(op, self.dtype());
  COHORT_CHECK_AS(TypeError, dtype == self.dtype(), i.name, "_: result type ", dtype,
                  " can't be cast to the desired output type ", self.dtype());
  bool graph = autograd::needs_grad({self});
  detail::check_inplace(i.name, self, graph);
  if (graph) {
    // self is about to be overwritten: an op that saves its input for backward gets a copy; one that
    // saves only its output (relu_, exp_, sigmoid_, ...) reads self directly and saves a new tensor.
    Tensor result = unary_op(op, needs_input(op) ? cohort::clone(self) : self);
    {
      NoGradGuard g;
      kernel::copy(self, result);
    }
    detail::rebase_history(self, result);
  } else {
    kernel::unary(op, self, self);
  }
  self.unsafe_impl()->storage()->bump_version();
  return self;
}

Tensor& unary_out(UnaryOp op, Tensor& out, const Tensor& x) {
  UnaryInfo i = info(op);
  detail::check_defined(i.name, x);
  DType dtype = out_dtype(op, x.dtype());
  detail::resize_out(i.name, out, x.sizes(), dtype);
  if (out.dtype() == dtype) kernel::unary(op, out, detail::cast_nograd(x, dtype));
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

Tensor clamp(const Tensor& x, std::optional<Scalar> min, std::optional<Scalar> max) {
  detail::check_defined("clamp", x);
  COHORT_CHECK(min || max, "clamp: at least one of min and max must be given");
  COHORT_CHECK_AS(TypeError, x.dtype() != kBool, "clamp: not supported for bool tensors");
  DType dtype = x.dtype();
  if (!is_floating_point(dtype) && ((min && min->is_floating_point()) || (max && max->is_floating_point())))
    dtype = get_default_dtype();
  Tensor out = detail::make_empty(x.sizes(), dtype, x.device());
  kernel::clamp(out, detail::cast_nograd(x, dtype), min, max);
  return autograd::record("ClampBackward1", out, {x}, [min, max, sx = SavedTensor(x)](const Tensor& g) {
    Tensor xv = sx.unpack();
    Tensor keep = ones_like(xv, kBool);
    if (min) keep = logical_and(keep, xv >= *min);
    if (max) keep = logical_and(keep, xv <= *max);
    return std::vector<Tensor>{where(keep, g, zeros_like(g))};
  });
}

Tensor clamp_min(const Tensor& x, const Scalar& min) { return clamp(x, min, std::nullopt); }
Tensor clamp_max(const Tensor& x, const Scalar& max) { return clamp(x, std::nullopt, max); }

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
