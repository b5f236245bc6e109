// Matrix products: mm and bmm are primitives (oneDNN for float32), and addmm and baddbmm, which
// add to the product in the same pass (Note [Fused addend] in dnnl/matmul.cpp); matmul, dot and
// outer are compositions of them.
#include "cohort/ops/linalg.h"

#include <algorithm>
#include <array>
#include <utility>

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"
#include "ops/cpu/kernels.h"
#include "ops/cpu/matmul_kernels.h"
#include "ops/internal.h"
#include "cohort/autograd/trace.h"
#include "ops/autocast_casts.h"

namespace cohort {

using autograd::SavedTensor;

namespace {

void check_matmul_dtypes(const char* op, const Tensor& a, const Tensor& b) {
  COHORT_CHECK_AS(TypeError, a.dtype() == b.dtype(), op, ": expected both operands to have the same dtype, got ",
                  a.dtype(), " and ", b.dtype());
  COHORT_CHECK_AS(TypeError, a.dtype() != kBool, op, ": bool matrices are not supported");
  detail::check_same_device(op, a, b);
}

// [n, k] as a batch of one [1, n, k], without recording a view.
Tensor as_batch(const Tensor& t) {
  return detail::make_view(t, {1, t.size(0), t.size(1)}, {0, t.stride(0), t.stride(1)}, t.storage_offset());
}

// Note [Gradient layout of a transposed operand]
// nn::Linear multiplies by weight.t(), a column-major view. Its gradient computed as a.t().mm(g)
// is row-major, so after TBackward the weight's gradient is a column-major view, which
// AccumulateGrad has to copy into .grad (fc1 of the blitz CNN: 48k floats every step). Computing
// it as g.t().mm(a) transposed instead gives the operand's own layout, so the weight's gradient
// arrives contiguous and is kept as it is (PyTorch's mm backward picks the layout the same way).
bool is_column_major(const Tensor& t) {
  return !t.is_contiguous() && t.stride(0) == 1 && t.stride(1) == std::max<int64_t>(t.size(0), 1);
}

// The gradients of a x b (matrices) for the gradient g of the product, each in its operand's layout;
// a is needed only for db and b only for da.
std::vector<Tensor> mm_grads(const Tensor& g, const Tensor& a, const Tensor& b, bool a_grad, bool b_grad,
                             bool a_cols, bool b_cols) {
  Tensor da, db;
  if (a_grad) da = a_cols ? mm(b, g.t()).t() : mm(g, b.t());
  if (b_grad) db = b_cols ? mm(g.t(), a).t() : mm(a.t(), g);
  return {da, db};
}

// Whether an addend can be copied into the product's buffer: the operands' dtype and device, and
// sizes that broadcast to the product's.
bool addend_fits(const Tensor& input, const Tensor& a, IntArrayRef out_sizes) {
  if (input.dtype() != a.dtype() || input.device() != a.device() || input.dim() > static_cast<int64_t>(out_sizes.size()))
    return false;
  for (int64_t d = 1; d <= input.dim(); ++d)
    if (input.size(-d) != 1 && input.size(-d) != out_sizes[out_sizes.size() - d]) return false;
  return true;
}

// Note [Gradient layout of a batched operand]
// Multi-head attention splits a projection [len, N, E] into heads as a view [N*H, len, hd] whose
// batch stride (hd) is smaller than its row stride (N*E), and multiplies by the keys through a
// transpose. A contiguous gradient of such an operand is copied back into the projection's layout
// by the view's backward, and for the keys that copy reads with a stride of hd floats: 6.3 ms for
// 2048 x 512 on one core, against 1.3 ms for the product itself (PyTorch pays the same copy). So,
// outside create_graph, bmm's and baddbmm's backward write a float32 gradient straight in its
// operand's layout when that is a permutation of a dense tensor with a unit stride in a matrix dim
// (a column-major one as the transposed product), and scale by baddbmm's alpha in the product
// rather than in a pass over g. oneDNN's gemm writes such a layout as fast as a contiguous one
// (256 products of 64^3: 1.10 against 1.14 ms). Under create_graph the gradients are the
// differentiable ops' results, contiguous, as before.
bool is_dense_permutation(IntArrayRef sizes, IntArrayRef strides) {
  std::array<std::pair<int64_t, int64_t>, 3> dims;  // (stride, size) of the dims of size > 1
  size_t n = 0;
  for (size_t d = 0; d < 3; ++d)
    if (sizes[d] > 1) dims[n++] = {strides[d], sizes[d]};
  for (size_t i = 1; i < n; ++i)  // insertion sort (see dnnl_layout_ok in dnnl/matmul.cpp)
    for (size_t j = i; j > 0 && dims[j] < dims[j - 1]; --j) std::swap(dims[j], dims[j - 1]);
  int64_t expected = 1;
  for (size_t i = 0; i < n; ++i) {
    if (dims[i].first != expected) return false;
    expected *= dims[i].second;
  }
  return true;
}

// The sizes and strides of an operand, kept by a backward for the layout of its gradient.
struct Layout {
  Shape sizes, strides;
  explicit Layout(const Tensor& t) : sizes(t.sizes().vec()), strides(t.strides().vec()) {}
};

// alpha * x y, the gradient of an operand laid out as `like`: Note [Gradient layout of a batched
// operand]. x_first: g is x (else y), the operand alpha scales in the differentiable composition.
Tensor bmm_grad(const Tensor& x, const Tensor& y, double alpha, const Layout& like, bool x_first) {
  const int64_t numel = like.sizes[0] * like.sizes[1] * like.sizes[2];
  const bool direct = !GradMode::is_enabled() && x.dtype() == kFloat32 && y.dtype() == kFloat32 && x.size(2) > 0 &&
                      numel > 0;
  if (!direct) {
    if (alpha == 1) return bmm(x, y);
    return x_first ? bmm(x * alpha, y) : bmm(x, y * alpha);
  }
  const bool rows = like.strides[2] == 1 || like.sizes[2] == 1, cols = like.strides[1] == 1 || like.sizes[1] == 1;
  const bool keep = (rows || cols) && is_dense_permutation(like.sizes, like.strides);
  const Tensor c = keep ? detail::make_view(detail::make_empty({numel}, kFloat32, x.device()), like.sizes, like.strides, 0)
                        : detail::make_empty(like.sizes, kFloat32, x.device());
  if (c.stride(2) == 1 || c.size(2) == 1) kernel::bmm_accumulate(c, x, y, alpha, 0);
  else kernel::bmm_accumulate(c.transpose(1, 2), y.transpose(1, 2), x.transpose(1, 2), alpha, 0);
  return c;
}

// The gradient of addmm's input, g summed to its sizes. A bias [m] of an [n, m] product takes a row
// of ones times g, a GEMV on oneDNN, which took half the time of the row reduction for a
// 2048 x 2048 g on one core (1.3 against 2.6 ms).
Tensor addend_grad(const Tensor& g, IntArrayRef in_sizes) {
  if (in_sizes.size() == 1 && g.dim() == 2 && g.size(0) > 1 && in_sizes[0] == g.size(1) && g.dtype() == kFloat32)
    return mm(ones({1, g.size(0)}, g.options()), g).view({g.size(1)});
  return sum_to(g, in_sizes);
}

}  // namespace

Tensor bmm(const Tensor& a, const Tensor& b) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return bmm(autocast::to_lower(a), autocast::to_lower(b));
  }
  detail::check_defined("bmm", a, "first");
  detail::check_defined("bmm", b, "second");
  COHORT_CHECK(a.dim() == 3 && b.dim() == 3, "bmm: expected two 3-d tensors, got ", a.sizes(), " and ", b.sizes());
  COHORT_CHECK(a.size(0) == b.size(0), "bmm: batch sizes differ: ", a.sizes(), " and ", b.sizes());
  COHORT_CHECK(a.size(2) == b.size(1), "bmm: cannot multiply ", a.sizes(), " by ", b.sizes(), " (inner dimensions ",
               a.size(2), " and ", b.size(1), " differ)");
  check_matmul_dtypes("bmm", a, b);
  Tensor out = detail::make_empty({a.size(0), a.size(1), b.size(2)}, a.dtype(), a.device());
  kernel::bmm(out, a, b);
  bool a_grad = a.requires_grad(), b_grad = b.requires_grad();
  return autograd::record("BmmBackward0", out, {a, b},
                          [=, la = Layout(a), lb = Layout(b), sa = SavedTensor(b_grad ? a : Tensor()),
                           sb = SavedTensor(a_grad ? b : Tensor())](const Tensor& g) {
    return std::vector<Tensor>{a_grad ? bmm_grad(g, sb.unpack().transpose(1, 2), 1, la, true) : Tensor(),
                               b_grad ? bmm_grad(sa.unpack().transpose(1, 2), g, 1, lb, false) : Tensor()};
  });
}

Tensor mm(const Tensor& a, const Tensor& b) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return mm(autocast::to_lower(a), autocast::to_lower(b));
  }
  trace::OpScope trace("mm");
  detail::check_defined("mm", a, "first");
  detail::check_defined("mm", b, "second");
  COHORT_CHECK(a.dim() == 2 && b.dim() == 2, "mm: expected two matrices, got shapes ", a.sizes(), " and ", b.sizes());
  COHORT_CHECK(a.size(1) == b.size(0), "mm: cannot multiply ", a.sizes(), " by ", b.sizes(), " (inner dimensions ",
               a.size(1), " and ", b.size(0), " differ)");
  check_matmul_dtypes("mm", a, b);
  Tensor out = detail::make_empty({a.size(0), b.size(1)}, a.dtype(), a.device());
  kernel::bmm(as_batch(out), as_batch(a), as_batch(b));
  if (trace) trace.record({a, b}, out);
  bool a_grad = a.requires_grad(), b_grad = b.requires_grad();
  // Each gradient in its operand's layout: Note [Gradient layout of a transposed operand].
  bool a_cols = is_column_major(a), b_cols = is_column_major(b);
  return autograd::record("MmBackward0", out, {a, b},
                          [=, sa = SavedTensor(b_grad ? a : Tensor()), sb = SavedTensor(a_grad ? b : Tensor())](const Tensor& g) {
    return mm_grads(g, sa.unpack(), sb.unpack(), a_grad, b_grad, a_cols, b_cols);
  });
}

namespace {
Tensor matmul_untraced(const Tensor& a, const Tensor& b) {
  detail::check_defined("matmul", a, "first");
  detail::check_defined("matmul", b, "second");
  COHORT_CHECK(a.dim() > 0 && b.dim() > 0, "matmul: both arguments need at least 1 dimension, got shapes ", a.sizes(),
               " and ", b.sizes());
  if (a.dim() == 1 && b.dim() == 1) return dot(a, b);
  if (a.dim() == 2 && b.dim() == 1) return mm(a, b.unsqueeze(1)).squeeze(1);
  if (a.dim() == 1 && b.dim() == 2) return mm(a.unsqueeze(0), b).squeeze(0);
  if (a.dim() == 2 && b.dim() == 2) return mm(a, b);
  // Batched: promote 1-d operands, broadcast the batch dims, run one bmm.
  Tensor x = a.dim() == 1 ? a.unsqueeze(0) : a;
  Tensor y = b.dim() == 1 ? b.unsqueeze(1) : b;
  COHORT_CHECK(x.size(-1) == y.size(-2), "matmul: cannot multiply ", a.sizes(), " by ", b.sizes(), " (inner dimensions ",
               x.size(-1), " and ", y.size(-2), " differ)");
  const int64_t n = x.size(-2), k = x.size(-1), m = y.size(-1);
  // [..., n, k] x [k, m]: fold the batch into the rows when x is laid out for it (one big mm).
  if (y.dim() == 2 && x.is_contiguous()) {
    Shape out_sizes = x.sizes().vec();
    out_sizes.back() = m;
    Tensor r = mm(x.reshape({-1, k}), y).view(out_sizes);
    return b.dim() == 1 ? r.squeeze(-1) : r;
  }
  Shape xb(x.sizes().begin(), x.sizes().end() - 2), yb(y.sizes().begin(), y.sizes().end() - 2);
  Shape batch = broadcast_shapes(xb, yb, "matmul");
  int64_t nb = 1;
  for (int64_t s : batch) nb *= s;
  Shape xs = batch, ys = batch;
  xs.push_back(n), xs.push_back(k), ys.push_back(k), ys.push_back(m);
  Tensor r = bmm(x.expand(xs).reshape({nb, n, k}), y.expand(ys).reshape({nb, k, m}));
  Shape out_sizes = batch;
  out_sizes.push_back(n), out_sizes.push_back(m);
  r = r.view(out_sizes);
  if (a.dim() == 1) r = r.squeeze(-2);
  if (b.dim() == 1) r = r.squeeze(-1);
  return r;
}
}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return matmul(autocast::to_lower(a), autocast::to_lower(b));
  }
  trace::OpScope trace("matmul");
  Tensor out = matmul_untraced(a, b);
  if (trace) trace.record({a, b}, out);
  return out;
}

Tensor addmm(const Tensor& input, const Tensor& a, const Tensor& b, const Scalar& beta, const Scalar& alpha) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return addmm(autocast::to_lower(input), autocast::to_lower(a), autocast::to_lower(b), beta, alpha);
  }
  trace::OpScope trace("addmm");
  detail::check_defined("addmm", input, "input");
  const double al = alpha.to_double(), be = beta.to_double();
  Tensor out;
  const bool fused = be != 0 && a.defined() && b.defined() && a.dim() == 2 && b.dim() == 2 &&
                     addend_fits(input, a, {a.size(0), b.size(1)});
  if (!fused) {  // composed: beta 0 (input not read), or an input of another dtype (promotion)
    Tensor prod = mm(a, b);
    if (al != 1) prod = prod * alpha;
    out = be == 0 ? prod : be == 1 ? prod + input : prod + input * beta;
  } else {  // Note [Fused addend]
    COHORT_CHECK(a.size(1) == b.size(0), "addmm: cannot multiply ", a.sizes(), " by ", b.sizes(),
                 " (inner dimensions ", a.size(1), " and ", b.size(0), " differ)");
    check_matmul_dtypes("addmm", a, b);
    out = detail::make_empty({a.size(0), b.size(1)}, a.dtype(), a.device());
    const bool row_bias = al == 1 && be == 1 && input.dim() == 1 && input.size(0) == b.size(1);
    if (!(row_bias && kernel::bmm_bias(as_batch(out), as_batch(a), as_batch(b), input))) {
      kernel::copy(out, input);
      kernel::bmm_accumulate(as_batch(out), as_batch(a), as_batch(b), al, be);
    }
    const bool in_grad = input.requires_grad(), a_grad = a.requires_grad(), b_grad = b.requires_grad();
    const bool a_cols = is_column_major(a), b_cols = is_column_major(b);
    out = autograd::record("AddmmBackward0", out, {input, a, b},
                           [=, in_sizes = input.sizes().vec(), sa = SavedTensor(b_grad ? a : Tensor()),
                            sb = SavedTensor(a_grad ? b : Tensor())](const Tensor& g) {
      const Tensor ga = al == 1 ? g : g * al;
      auto ab = mm_grads(ga, sa.unpack(), sb.unpack(), a_grad, b_grad, a_cols, b_cols);
      return std::vector<Tensor>{in_grad ? addend_grad(be == 1 ? g : g * be, in_sizes) : Tensor(), ab[0], ab[1]};
    });
  }
  if (trace) trace.record({input, a, b}, out, {{"alpha", al}, {"beta", be}});
  return out;
}

Tensor baddbmm(const Tensor& input, const Tensor& batch1, const Tensor& batch2, const Scalar& beta,
               const Scalar& alpha) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return baddbmm(autocast::to_lower(input), autocast::to_lower(batch1), autocast::to_lower(batch2), beta, alpha);
  }
  detail::check_defined("baddbmm", input, "input");
  detail::check_defined("baddbmm", batch1, "batch1");
  detail::check_defined("baddbmm", batch2, "batch2");
  COHORT_CHECK(batch1.dim() == 3 && batch2.dim() == 3, "baddbmm: expected two 3-d tensors, got ", batch1.sizes(),
               " and ", batch2.sizes());
  const Shape sizes{batch1.size(0), batch1.size(1), batch2.size(2)};
  COHORT_CHECK(input.dim() <= 3, "baddbmm: expected an input that broadcasts to ", sizes, ", got input of shape ",
               input.sizes());
  for (int64_t d = 1; d <= input.dim(); ++d)
    COHORT_CHECK(input.size(-d) == 1 || input.size(-d) == sizes[3 - d], "baddbmm: expected an input that broadcasts to ",
                 sizes, ", got input of shape ", input.sizes());
  const double al = alpha.to_double(), be = beta.to_double();
  if (be == 0 || !addend_fits(input, batch1, sizes)) {  // composed: input not read, or promoted
    Tensor prod = bmm(batch1, batch2);
    if (al != 1) prod = prod * alpha;
    if (be == 0) return prod;
    return be == 1 ? prod + input : prod + input * beta;
  }
  // Note [Fused addend]
  COHORT_CHECK(batch1.size(0) == batch2.size(0), "baddbmm: batch sizes differ: ", batch1.sizes(), " and ",
               batch2.sizes());
  COHORT_CHECK(batch1.size(2) == batch2.size(1), "baddbmm: cannot multiply ", batch1.sizes(), " by ", batch2.sizes(),
               " (inner dimensions ", batch1.size(2), " and ", batch2.size(1), " differ)");
  check_matmul_dtypes("baddbmm", batch1, batch2);
  Tensor out = detail::make_empty(sizes, batch1.dtype(), batch1.device());
  kernel::copy(out, input);
  kernel::bmm_accumulate(out, batch1, batch2, al, be);
  const bool in_grad = input.requires_grad(), a_grad = batch1.requires_grad(), b_grad = batch2.requires_grad();
  return autograd::record("BaddbmmBackward0", out, {input, batch1, batch2},
                          [=, in_sizes = input.sizes().vec(), la = Layout(batch1), lb = Layout(batch2),
                           sa = SavedTensor(b_grad ? batch1 : Tensor()),
                           sb = SavedTensor(a_grad ? batch2 : Tensor())](const Tensor& g) {
    return std::vector<Tensor>{in_grad ? sum_to(be == 1 ? g : g * be, in_sizes) : Tensor(),
                               a_grad ? bmm_grad(g, sb.unpack().transpose(1, 2), al, la, true) : Tensor(),
                               b_grad ? bmm_grad(sa.unpack().transpose(1, 2), g, al, lb, false) : Tensor()};
  });
}

namespace {

// tril and triu: x where the element's (col - row) is on the kept side of `diagonal`, else 0.
Tensor triangle(const char* op, const Tensor& x, int64_t diagonal, bool lower) {
  detail::check_defined(op, x);
  COHORT_CHECK(x.dim() >= 2, op, ": expected a tensor of at least 2 dims [..., m, n], got shape ", x.sizes());
  const TensorOptions index = TensorOptions(kInt64).device(x.device());
  const Tensor offset = arange(x.size(-1), index).unsqueeze(0) - arange(x.size(-2), index).unsqueeze(1);
  const Tensor keep = lower ? offset.le(diagonal) : offset.ge(diagonal);
  return where(keep, x, detail::scalar_to_tensor(0, x.dtype(), x.device()));
}

}  // namespace

Tensor tril(const Tensor& x, int64_t diagonal) { return triangle("tril", x, diagonal, true); }
Tensor triu(const Tensor& x, int64_t diagonal) { return triangle("triu", x, diagonal, false); }

Tensor dot(const Tensor& a, const Tensor& b) {
  COHORT_CHECK(a.dim() == 1 && b.dim() == 1, "dot: expected 1-d tensors, got ", a.sizes(), " and ", b.sizes());
  COHORT_CHECK(a.size(0) == b.size(0), "dot: inconsistent tensor size, expected tensor [", a.size(0),
               "] and src [", b.size(0), "] to have the same number of elements");
  autocast::CastOpScope as_called;  // PyTorch's autocast leaves dot in its inputs' dtype
  return mm(a.unsqueeze(0), b.unsqueeze(1)).reshape({});
}

Tensor outer(const Tensor& a, const Tensor& b) {
  COHORT_CHECK(a.dim() == 1 && b.dim() == 1, "outer: expected 1-d tensors, got ", a.sizes(), " and ", b.sizes());
  return a.unsqueeze(1) * b.unsqueeze(0);
}

}  // namespace cohort
