// Reductions with their backward: sum, mean, prod, max/min, amax/amin, norm and var are rows of one
// table (Note [Op tables] in cpu/kernels.h); max/min with indices, argmax/argmin, std, logsumexp
// and sum_to are written out. softmax and log_softmax are in softmax.cpp.
#include "cohort/ops/reduction.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/profiling.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/indexing.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/shape.h"
#include "ops/cpu/kernels.h"
#include "ops/internal.h"
#include "ops/autocast_casts.h"

namespace cohort {

using autograd::SavedTensor;
using kernel::ReduceOp;

namespace {

// Sorted, unique, wrapped dims; all dims when `dims` is empty.
std::vector<int64_t> normalize_dims(const Tensor& x, IntArrayRef dims, const char* op) {
  std::vector<int64_t> out;
  if (dims.empty()) {
    for (int64_t d = 0; d < x.dim(); ++d) out.push_back(d);
    return out;
  }
  for (int64_t d : dims) out.push_back(wrap_dim(d, std::max<int64_t>(x.dim(), 1), op));
  std::sort(out.begin(), out.end());
  COHORT_CHECK(std::adjacent_find(out.begin(), out.end()) == out.end(), op, ": dim appears more than once in ", dims);
  if (x.dim() == 0) out.clear();  // a 0-d tensor reduces over dim 0 or -1 to itself
  return out;
}

Shape reduced_shape(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  Shape shape;
  for (int64_t d = 0; d < x.dim(); ++d) {
    bool reduced = std::binary_search(dims.begin(), dims.end(), d);
    if (!reduced) shape.push_back(x.size(d));
    else if (keepdim) shape.push_back(1);
  }
  return shape;
}

int64_t reduced_count(const Tensor& x, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= x.size(d);
  return n;
}

// Runs a reduction kernel into a fresh tensor of `dtype` with the kept (or keepdim) shape.
Tensor run_reduce(ReduceOp op, const Tensor& x, const std::vector<int64_t>& dims, bool keepdim, DType dtype,
                  double param = 0) {
  Tensor out = detail::make_empty(reduced_shape(x, dims, false), dtype, x.device());
  kernel::reduce(op, out, x, dims, param);
  if (keepdim) out = detail::make_view(out, reduced_shape(x, dims, true), contiguous_strides(reduced_shape(x, dims, true)), 0);
  return out;
}

// The gradient of a reduction, broadcast back over the reduced dims.
Tensor expand_back(const Tensor& g, IntArrayRef in_sizes, const std::vector<int64_t>& dims, bool keepdim) {
  Tensor r = g;
  if (!keepdim)
    for (int64_t d : dims) r = r.unsqueeze(d);
  return r.expand(in_sizes);
}

// The dtype of a sum or a product: integers add up in int64.
DType sum_dtype(DType in) { return is_floating_point(in) ? in : kInt64; }

void check_not_empty(const char* op, const Tensor& x, const std::vector<int64_t>& dims) {
  for (int64_t d : dims)
    COHORT_CHECK_AS(IndexError, x.size(d) > 0, op, ": cannot reduce over dim ", d, " of size 0 (tensor of shape ",
                    x.sizes(), ") because the operation has no identity");
  if (dims.empty() && x.dim() > 0)
    COHORT_CHECK_AS(IndexError, x.numel() > 0, op, ": cannot reduce an empty tensor of shape ", x.sizes());
}

using Arg = const Tensor&;

// What a backward formula reads besides the gradient (a bit set).
struct Saves {
  static constexpr unsigned Nothing = 0, Input = 1, Output = 2;
};

// What a reduction's backward knows besides g, x and y: the input's sizes and dtype, the reduced
// dims (sorted), keepdim, how many elements each output reduces, and the kernel's parameter (p, the
// correction).
struct Reduced {
  Shape in_sizes;
  DType in_dtype;
  std::vector<int64_t> dims;
  bool keepdim;
  double count;
  double param;
  // t, shaped like the output, broadcast back over the reduced dims.
  Tensor expand(const Tensor& t) const { return expand_back(t, in_sizes, dims, keepdim); }
};

// An overload's name (in messages) and backward node. libtorch tells the all-elements form (sum(),
// max()) from the dim-list form (sum(dims), amax(dims)).
struct Overload {
  const char* name;
  const char* node;
};

// The result's dtype: the input's, or int64 for integer inputs (sums and products).
enum class Result { Same, Widened };
// Whether reducing no elements is allowed (the sum of nothing is 0) or an error (the max of nothing).
enum class Empty { Allowed, Error };

struct ReduceInfo {
  ReduceOp op;
  Overload all, dims;
  Result result;
  Empty empty;
  unsigned saves;
  // d out / d x given the gradient g, the input x and the output y (each undefined unless saved).
  Tensor (*derivative)(Arg g, Arg x, Arg y, const Reduced& r);
};

// d prod / d x_i = the product of the others, computed directly so that zeros are handled; stacked
// (not written in place) so that the gradient is differentiable again under create_graph.
Tensor prod_backward(Arg g, Arg x, Arg, const Reduced&) {
  Tensor xv = x.reshape({-1});
  int64_t n = xv.numel();
  std::vector<Tensor> others;
  others.reserve(n);
  for (int64_t i = 0; i < n; ++i) others.push_back(cat({xv.narrow(0, 0, i), xv.narrow(0, i + 1, n - i - 1)}).prod());
  if (n == 0) return zeros_like(x);
  return (g * stack(others)).reshape(x.sizes());
}

// max/min: the elements equal to the result share the gradient evenly, as in PyTorch.
Tensor extreme_backward(Arg g, Arg x, Arg y, const Reduced& r) {
  Tensor mask = (x == r.expand(y)).to(g.dtype());
  return r.expand(g) * mask / mask.sum(IntArrayRef(r.dims), true);
}

Tensor norm_backward(Arg g, Arg x, Arg y, const Reduced& r) {
  const double p = r.param;
  if (p == 1) return r.expand(g) * sign(x);
  Tensor n = r.expand(y);
  if (p == 2) return where(n == 0, zeros_like(x), r.expand(g) * x / n);
  return where(n == 0, zeros_like(x), r.expand(g) * sign(x) * pow(abs(x), p - 1) / pow(n, p - 1));
}

Tensor norm_inf_backward(Arg g, Arg x, Arg y, const Reduced& r) {
  Tensor mask = (abs(x) == r.expand(y)).to(g.dtype());
  return r.expand(g) * sign(x) * mask / mask.sum(IntArrayRef(r.dims), true);
}

constexpr ReduceInfo kReduce[] = {
    {ReduceOp::Sum, {"sum", "SumBackward0"}, {"sum", "SumBackward1"}, Result::Widened, Empty::Allowed, Saves::Nothing,
     [](Arg g, Arg, Arg, const Reduced& r) { return r.expand(g).to(r.in_dtype); }},
    {ReduceOp::Mean, {"mean", "MeanBackward0"}, {"mean", "MeanBackward1"}, Result::Same, Empty::Allowed, Saves::Nothing,
     [](Arg g, Arg, Arg, const Reduced& r) { return r.expand(g) / r.count; }},
    {ReduceOp::Prod, {"prod", "ProdBackward0"}, {"prod", "ProdBackward1"}, Result::Widened, Empty::Allowed, Saves::Input,
     prod_backward},
    {ReduceOp::Max, {"max", "MaxBackward1"}, {"amax", "AmaxBackward0"}, Result::Same, Empty::Error,
     Saves::Input | Saves::Output, extreme_backward},
    {ReduceOp::Min, {"min", "MinBackward1"}, {"amin", "AminBackward0"}, Result::Same, Empty::Error,
     Saves::Input | Saves::Output, extreme_backward},
    {ReduceOp::NormP, {"norm", "NormBackward1"}, {"norm", "NormBackward1"}, Result::Same, Empty::Allowed,
     Saves::Input | Saves::Output, norm_backward},
    {ReduceOp::NormInf, {"norm", "NormBackward1"}, {"norm", "NormBackward1"}, Result::Same, Empty::Allowed,
     Saves::Input | Saves::Output, norm_inf_backward},
    {ReduceOp::Var, {"var", "VarBackward0"}, {"var", "VarBackward0"}, Result::Same, Empty::Allowed, Saves::Input,
     [](Arg g, Arg x, Arg, const Reduced& r) {
       return r.expand(g) * (x - x.mean(IntArrayRef(r.dims), true)) * (2.0 / (r.count - r.param));
     }},
};
static_assert(kernel::is_op_table<ReduceOp>(kReduce), "kReduce: one row per ReduceOp, in enum order");

// Reduces x over dims_in (all dims when empty) with op, and records its backward. all: the
// all-elements overload (its name and node). param: p for the norms, the correction for var.
Tensor reduce_op(ReduceOp op, bool all, const Tensor& x, IntArrayRef dims_in, bool keepdim, double param = 0) {
  const ReduceInfo& info = kReduce[static_cast<size_t>(op)];
  const Overload& o = all ? info.all : info.dims;
  profiling::Scope profile(o.name);
  if (profile) profile.inputs({x});
  detail::check_defined(o.name, x);
  auto dims = normalize_dims(x, dims_in, o.name);
  if (info.empty == Empty::Error) check_not_empty(o.name, x, dims);
  DType dtype = info.result == Result::Widened ? sum_dtype(x.dtype()) : x.dtype();
  Tensor out = run_reduce(op, x, dims, keepdim, dtype, param);
  if (!autograd::needs_grad({x})) return out;
  Reduced r{x.sizes().vec(), x.dtype(), dims, keepdim, static_cast<double>(reduced_count(x, dims)), param};
  return autograd::record(o.node, out, {x},
                          [r = std::move(r), derivative = info.derivative,
                           sx = SavedTensor(info.saves & Saves::Input ? x : Tensor()),
                           sy = SavedTensor(info.saves & Saves::Output ? out : Tensor(), true)](const Tensor& g) {
                            return std::vector<Tensor>{derivative(g, sx.unpack(), sy.unpack(), r)};
                          });
}

std::tuple<Tensor, Tensor> extreme_dim(const Tensor& x, int64_t dim, bool keepdim, bool is_max) {
  const char* op = is_max ? "max" : "min";
  detail::check_defined(op, x);
  if (x.dim() == 0) {
    Tensor values = x.clone();
    return {values, zeros({}, TensorOptions(kInt64).device(x.device()))};
  }
  dim = wrap_dim(dim, x.dim(), op);
  check_not_empty(op, x, {dim});
  Shape shape = reduced_shape(x, {dim}, false);
  Tensor values = detail::make_empty(shape, x.dtype(), x.device());
  Tensor indices = detail::make_empty(shape, kInt64, x.device());
  kernel::reduce_with_index(is_max, values, indices, x, dim);
  if (keepdim) {
    values = values.unsqueeze(dim);
    indices = indices.unsqueeze(dim);
  }
  Shape in_sizes = x.sizes().vec();
  values = autograd::record(is_max ? "MaxBackward0" : "MinBackward0", values, {x}, [=](const Tensor& g) {
    Tensor gi = keepdim ? g : g.unsqueeze(dim);
    Tensor ii = keepdim ? indices : indices.unsqueeze(dim);
    return std::vector<Tensor>{scatter_add(zeros(in_sizes, g.options()), dim, ii, gi)};
  });
  return {values, indices};
}

Tensor arg_extreme(const Tensor& x, std::optional<int64_t> dim, bool keepdim, bool is_max) {
  const char* op = is_max ? "argmax" : "argmin";
  detail::check_defined(op, x);
  if (!dim) {
    COHORT_CHECK_AS(IndexError, x.numel() > 0, op, ": cannot take the ", op, " of an empty tensor of shape ", x.sizes());
    Tensor flat = x.reshape({-1});
    Tensor idx = std::get<1>(extreme_dim(flat.detach(), 0, false, is_max));
    if (keepdim) idx = idx.reshape(Shape(static_cast<size_t>(x.dim()), 1));
    return idx;
  }
  return std::get<1>(extreme_dim(x.detach(), *dim, keepdim, is_max));
}

}  // namespace

// The all-elements overloads (sum(), max()) and the dim-list ones (sum(dims), amax(dims)) record
// differently named nodes; sum, mean, norm and var without dims and keepdim count as the former.
Tensor sum(const Tensor& x, IntArrayRef dims_in, bool keepdim, std::optional<DType> dtype) {
  detail::check_defined("sum", x);
  if (dtype && *dtype != sum_dtype(x.dtype())) return sum(x.to(*dtype), dims_in, keepdim, std::nullopt);
  return reduce_op(ReduceOp::Sum, dims_in.empty() && !keepdim, x, dims_in, keepdim);
}

Tensor sum(const Tensor& x, std::optional<DType> dtype) { return sum(x, {}, false, dtype); }

Tensor mean(const Tensor& x, IntArrayRef dims_in, bool keepdim, std::optional<DType> dtype) {
  detail::check_defined("mean", x);
  DType out_dtype = dtype.value_or(x.dtype());
  COHORT_CHECK_AS(TypeError, is_floating_point(out_dtype), "mean: could not infer the output dtype: input dtype is ",
                  x.dtype(), "; hint: pass a floating dtype, or convert with .to(kFloat32)");
  if (out_dtype != x.dtype()) return mean(x.to(out_dtype), dims_in, keepdim, std::nullopt);
  return reduce_op(ReduceOp::Mean, dims_in.empty() && !keepdim, x, dims_in, keepdim);
}

Tensor mean(const Tensor& x, std::optional<DType> dtype) { return mean(x, {}, false, dtype); }

Tensor prod(const Tensor& x) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return prod(autocast::to_float32(x));
  }
  return reduce_op(ReduceOp::Prod, true, x, {}, false);
}

namespace {
// all / any as counts: zeros == 0, non-zeros > 0 (a NaN is not equal to 0, so it counts as true).
Tensor truth_dtype(const Tensor& x, Tensor result) { return x.dtype() == kUInt8 ? result.to(kUInt8) : result; }
}  // namespace

Tensor all(const Tensor& x) { return truth_dtype(x, eq(sum(eq(x.detach(), 0)), 0)); }
Tensor all(const Tensor& x, int64_t dim, bool keepdim) {
  return truth_dtype(x, eq(sum(eq(x.detach(), 0), IntArrayRef{dim}, keepdim), 0));
}
Tensor any(const Tensor& x) { return truth_dtype(x, gt(sum(ne(x.detach(), 0)), 0)); }
Tensor any(const Tensor& x, int64_t dim, bool keepdim) {
  return truth_dtype(x, gt(sum(ne(x.detach(), 0), IntArrayRef{dim}, keepdim), 0));
}
Tensor max(const Tensor& x) { return reduce_op(ReduceOp::Max, true, x, {}, false); }
Tensor min(const Tensor& x) { return reduce_op(ReduceOp::Min, true, x, {}, false); }
Tensor amax(const Tensor& x, IntArrayRef dims, bool keepdim) { return reduce_op(ReduceOp::Max, false, x, dims, keepdim); }
Tensor amin(const Tensor& x, IntArrayRef dims, bool keepdim) { return reduce_op(ReduceOp::Min, false, x, dims, keepdim); }
std::tuple<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) { return extreme_dim(x, dim, keepdim, true); }
std::tuple<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) { return extreme_dim(x, dim, keepdim, false); }
Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) { return arg_extreme(x, dim, keepdim, true); }
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) { return arg_extreme(x, dim, keepdim, false); }

Tensor norm(const Tensor& x, const Scalar& p_scalar, IntArrayRef dims_in, bool keepdim) {
  detail::check_defined("norm", x);
  COHORT_CHECK_AS(TypeError, x.is_floating_point(), "norm: expected a floating-point tensor, got ", x.dtype());
  double p = p_scalar.to_double();
  bool inf = std::isinf(p) && p > 0;
  COHORT_CHECK(inf || p > 0, "norm: p must be positive (or inf), got ", p);
  return reduce_op(inf ? ReduceOp::NormInf : ReduceOp::NormP, dims_in.empty() && !keepdim, x, dims_in, keepdim, p);
}

Tensor norm(const Tensor& x, const Scalar& p) { return norm(x, p, {}, false); }

Tensor var(const Tensor& x, IntArrayRef dims_in, bool unbiased, bool keepdim) {
  detail::check_defined("var", x);
  COHORT_CHECK_AS(TypeError, x.is_floating_point(), "var: expected a floating-point tensor, got ", x.dtype());
  return reduce_op(ReduceOp::Var, dims_in.empty() && !keepdim, x, dims_in, keepdim, unbiased ? 1 : 0);
}

Tensor std(const Tensor& x, IntArrayRef dims_in, bool unbiased, bool keepdim) {
  Tensor out;
  {
    NoGradGuard no_grad;
    out = sqrt(var(x, dims_in, unbiased, keepdim));
  }
  auto dims = normalize_dims(x, dims_in, "std");
  Shape in_sizes = x.sizes().vec();
  double correction = unbiased ? 1 : 0, n = static_cast<double>(reduced_count(x, dims));
  return autograd::record("StdBackward0", out, {x}, [=, sx = SavedTensor(x), so = SavedTensor(out, true)](const Tensor& g) {
    // d std = (x - mean) / ((n - correction) std); zero where std is 0, as in PyTorch.
    Tensor xv = sx.unpack();
    Tensor s = expand_back(so.unpack(), in_sizes, dims, keepdim);
    Tensor centered = xv - xv.mean(IntArrayRef(dims), true);
    // Divides by 1 where std is 0, so that the branch where() drops is finite and its derivative
    // (under create_graph) is 0, not 0 * inf.
    Tensor zero = s == 0;
    Tensor grad = expand_back(g, in_sizes, dims, keepdim) * centered / (where(zero, ones_like(s), s) * (n - correction));
    return std::vector<Tensor>{where(zero, zeros_like(grad), grad)};
  });
}

Tensor logsumexp(const Tensor& x, IntArrayRef dims_in, bool keepdim) {
  detail::check_defined("logsumexp", x);
  auto dims = normalize_dims(x, dims_in, "logsumexp");
  Tensor m = amax(x, IntArrayRef(dims), true).detach();
  m = where(isfinite(m), m, zeros_like(m));
  Tensor out = log(exp(x - m).sum(IntArrayRef(dims), true)) + m;
  if (!keepdim)
    for (size_t i = dims.size(); i-- > 0;) out = out.squeeze(dims[i]);
  return out;
}

Tensor sum_to(const Tensor& grad, IntArrayRef sizes) {
  if (grad.sizes() == sizes) return grad;
  const int64_t lead = grad.dim() - static_cast<int64_t>(sizes.size());
  COHORT_CHECK(lead >= 0, "sum_to: cannot sum a tensor of shape ", grad.sizes(), " to the larger shape ", sizes);
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < grad.dim(); ++d) {
    if (d < lead) dims.push_back(d);
    else if (sizes[d - lead] == 1 && grad.size(d) != 1) dims.push_back(d);
    else COHORT_CHECK(sizes[d - lead] == grad.size(d) || sizes[d - lead] == 1, "sum_to: shape ", grad.sizes(),
                      " does not broadcast from ", sizes);
  }
  Tensor r = dims.empty() ? grad : sum(grad, IntArrayRef(dims), true);
  return r.reshape(sizes);
}

}  // namespace cohort
