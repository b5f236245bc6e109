// in_projection_packed: attention's three input projections by the row blocks of one weight.
//
// Note [Packed input projection]
// The query, key and value projections multiply by the three row blocks of in_proj_weight [3E, E].
// As three linears on chunk()s of the parameter, each chunk's backward made a zero gradient of the
// whole [3E, E] parameter and copied its block in, and the engine added the three (in_proj_bias
// too): 1.2% of W6's transformer step on one core went to those fills, copies and adds. As one
// node with three outputs, the backward builds each parameter's gradient with one cat of the
// three blocks. The products are the same ones (three row blocks, not one [3E, E] product: that one
// is no faster, and its output would need splitting into heads by copies). Inputs are [rows, E].
// The backward is composed of ops, so it is differentiable again under create_graph.
#include "cohort/ops/attention.h"

#include "cohort/autograd/function.h"
#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/linalg.h"
#include "cohort/ops/shape.h"

namespace cohort {
namespace {

// One node with three outputs (autograd::record makes single-output nodes; lstm_layer is the other
// multi-output op written this way).
struct InProjection : autograd::Function<InProjection> {
  static autograd::variable_list forward(autograd::AutogradContext* ctx, const Tensor& xq, const Tensor& xk,
                                         const Tensor& xv, const Tensor& w, const Tensor& b) {
    ctx->save_for_backward({xq, xk, xv, w});
    ctx->saved_data["bias"] = b.defined();
    const std::vector<Tensor> ws = chunk(w, 3, 0), bs = b.defined() ? chunk(b, 3, 0) : std::vector<Tensor>(3);
    return {linear(xq, ws[0], bs[0]), linear(xk, ws[1], bs[1]), linear(xv, ws[2], bs[2])};
  }

  static autograd::variable_list backward(autograd::AutogradContext* ctx, autograd::variable_list g) {
    const autograd::variable_list saved = ctx->get_saved_variables();
    const std::vector<Tensor> ws = chunk(saved[3], 3, 0);
    autograd::variable_list grads(5);
    for (size_t i = 0; i < 3; ++i)
      if (ctx->needs_input_grad(i)) grads[i] = mm(g[i], ws[i]);
    // Each block of the weight's gradient is g^T x, computed as a product of row-major operands
    // (Note [Gradient layout of a transposed operand] in src/ops/linalg.cpp).
    if (ctx->needs_input_grad(3))
      grads[3] = cat({mm(g[0].t(), saved[0]), mm(g[1].t(), saved[1]), mm(g[2].t(), saved[2])}, 0);
    if (ctx->saved_data["bias"].toBool() && ctx->needs_input_grad(4)) {
      // Column sums as a row of ones times g (a GEMV; see addend_grad in src/ops/linalg.cpp).
      auto column_sums = [](const Tensor& t) { return mm(ones({1, t.size(0)}, t.options()), t); };
      grads[4] = cat({column_sums(g[0]), column_sums(g[1]), column_sums(g[2])}, 1).view({-1});
    }
    return grads;
  }
};

Shape shape_of(const Tensor& t) { return t.defined() ? t.sizes().vec() : Shape{}; }

}  // namespace

std::vector<Tensor> in_projection_packed(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& w,
                                         const Tensor& b) {
  COHORT_CHECK(w.defined() && w.dim() == 2 && w.size(0) % 3 == 0 && w.size(0) > 0,
               "in_projection_packed: expected a weight of shape [3 * E, E_in], got ", shape_of(w));
  const int64_t E = w.size(0) / 3, In = w.size(1);
  for (const Tensor* x : {&q, &k, &v})
    COHORT_CHECK(x->defined() && x->dim() == 2 && x->size(1) == In,
                 "in_projection_packed: expected q, k and v of shape [rows, ", In, "], got ", shape_of(q), ", ",
                 shape_of(k), " and ", shape_of(v));
  COHORT_CHECK(!b.defined() || (b.dim() == 1 && b.size(0) == 3 * E),
               "in_projection_packed: expected a bias of shape [", 3 * E, "] or none, got ", shape_of(b));
  for (const Tensor* x : {&q, &k, &v, &b})
    COHORT_CHECK_AS(TypeError, !x->defined() || x->dtype() == w.dtype(),
                    "in_projection_packed: expected every tensor in the weight's dtype ", w.dtype(), ", got ",
                    x->dtype());
  return InProjection::apply(q, k, v, w, b);
}

}  // namespace cohort
