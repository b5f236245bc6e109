// ONNX emitters for a transformer's ops: layer_norm (LayerNormalization from opset 17, its
// ReduceMean decomposition before) and multi-head attention (projections, heads, scaled scores,
// the mask, Softmax, the weighted sum and the output projection, as MatMul/Reshape/Transpose nodes).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/shape.h"
#include "io/onnx_graph.h"

namespace cohort::io::detail {

namespace {

// inputs: x, weight, bias (either undefined when absent); normalises over the last k dims.
void emit_layer_norm(Graph& g, const trace::Record& r) {
  const Tensor& x = r.inputs[0];
  const int64_t k = r.int_attr("normalized_dims");
  const double eps = r.float_attr("eps");
  const std::string xs = g.value(x, r.op);
  const std::string w = r.inputs[1].defined() ? g.value(r.inputs[1], r.op) : "";
  const std::string b = r.inputs[2].defined() ? g.value(r.inputs[2], r.op) : "";
  if (g.options().opset() >= 17) {
    std::vector<int64_t> shape(x.sizes().end() - k, x.sizes().end());
    std::vector<std::string> inputs{xs, !w.empty() ? w : g.constant(ones(shape, TensorOptions(x.dtype())))};
    if (!b.empty()) inputs.push_back(b);
    g.emit(r.output, "LayerNormalization", inputs, {Attribute::i("axis", -k), Attribute::f("epsilon", eps)});
    return;
  }
  // (x - mean) / sqrt(var + eps), the biased variance over the last k dims, then * w + b.
  std::vector<int64_t> axes;
  for (int64_t d = -k; d < 0; ++d) axes.push_back(d);
  auto mean = [&](const std::string& v) {
    return g.node("ReduceMean", {v}, {Attribute::ints("axes", axes), Attribute::i("keepdims", 1)});
  };
  const std::string centred = g.node("Sub", {xs, mean(xs)});
  const std::string var = mean(g.node("Mul", {centred, centred}));
  const std::string eps_c = g.constant(full({}, eps, TensorOptions(x.dtype())));
  std::string y = g.node("Div", {centred, g.node("Sqrt", {g.node("Add", {var, eps_c})})});
  if (!w.empty()) y = g.node("Mul", {y, w});
  if (!b.empty()) y = g.node("Add", {y, b});
  g.emit(r.output, "Identity", {y});
}

// The initializer name for a tensor derived from the module's `like` ("...self_attn.in_proj_weight"
// -> "...self_attn.onnx_<what>"), or empty (a "const_<k>") for a tensor the module does not hold.
std::string derived_name(const Graph& g, const Tensor& like, const std::string& what) {
  const std::string name = g.module_name(like);
  if (name.empty()) return "";
  const auto dot = name.rfind('.');
  return (dot == std::string::npos ? "" : name.substr(0, dot + 1)) + "onnx_" + what;
}

// inputs: query, key, value, attn_mask (undefined when absent), in_proj_weight [3E, E], in_proj_bias
// [3E] (or undefined), out_proj weight [E, E] and bias. Batched; [N, L, E] when batch_first, else
// [L, N, E]. Inside: [N, L, E] -> heads [N, H, L, hd]; scores q k^T / sqrt(hd) + mask, Softmax over
// the keys, times v; heads joined back to [N, L, E]; the output projection.
void emit_attention(Graph& g, const trace::Record& r) {
  const Tensor &w_in = r.inputs[4], &b_in = r.inputs[5], &w_out = r.inputs[6], &b_out = r.inputs[7];
  const Tensor& mask = r.inputs[3];
  const int64_t H = r.int_attr("num_heads"), E = w_in.size(1), hd = E / H;
  const bool batch_first = r.int_attr("batch_first") != 0;
  const TensorOptions options(w_in.dtype());
  auto batch_major = [&](const Tensor& t) {
    const std::string v = g.value(t, r.op);
    return batch_first ? v : g.node("Transpose", {v}, {Attribute::ints("perm", {1, 0, 2})});
  };
  const auto w = chunk(w_in.detach(), 3, 0);
  const auto b = b_in.defined() ? chunk(b_in.detach(), 3, 0) : std::vector<Tensor>(3);
  static const char* kNames[] = {"q", "k", "v"};
  // x [N, len, E] -> x w^T + b, in heads [N, H, len, hd] laid out by `perm` from [N, len, H, hd].
  auto project = [&](const Tensor& x, int i, std::vector<int64_t> perm) {
    const auto k = static_cast<size_t>(i);
    const std::string name = kNames[k];
    std::string p = g.node("MatMul", {batch_major(x), g.constant(w[k].t().contiguous(),
                                                                 derived_name(g, w_in, name + "_weight"))});
    if (b_in.defined()) p = g.node("Add", {p, g.constant(b[k].contiguous(), derived_name(g, w_in, name + "_bias"))});
    p = g.node("Reshape", {p, g.constant_ints({0, 0, H, hd})});
    return g.node("Transpose", {p}, {Attribute::ints("perm", perm)});
  };
  const std::string q = project(r.inputs[0], 0, {0, 2, 1, 3});
  const std::string kt = project(r.inputs[1], 1, {0, 2, 3, 1});  // [N, H, hd, S]
  const std::string v = project(r.inputs[2], 2, {0, 2, 1, 3});
  std::string scores = g.node("Mul", {g.node("MatMul", {q, kt}),
                                      g.constant(full({}, 1.0 / std::sqrt(static_cast<double>(hd)), options))});
  if (mask.defined()) {
    COHORT_CHECK(mask.dim() == 2, "multihead_attention: an attn_mask of shape ", mask.sizes(), " cannot be exported "
                 "(only a 2-d [L, S] mask); hint: give one mask for every batch and head");
    if (mask.dtype() == kBool) {
      COHORT_CHECK(mask.is_leaf() && !mask.requires_grad(), "multihead_attention: a bool attn_mask computed in "
                   "the forward cannot be exported; hint: pass a float mask (0 and -inf)");
      // true masks the position out: -inf added to its score, as the module does.
      const Tensor additive = zeros(mask.sizes(), options).masked_fill(mask, -std::numeric_limits<double>::infinity());
      scores = g.node("Add", {scores, g.constant(additive)});
    } else {
      scores = g.node("Add", {scores, g.value(mask, r.op)});
    }
  }
  std::string out = g.node("MatMul", {g.node("Softmax", {scores}, {Attribute::i("axis", -1)}), v});  // [N, H, L, hd]
  out = g.node("Reshape", {g.node("Transpose", {out}, {Attribute::ints("perm", {0, 2, 1, 3})}),
                           g.constant_ints({0, 0, E})});
  out = g.node("MatMul", {out, g.constant(w_out.detach().t().contiguous(), derived_name(g, w_in, "out_weight"))});
  if (b_out.defined()) out = g.node("Add", {out, g.value(b_out, r.op)});
  if (batch_first) {
    g.emit(r.output, "Identity", {out});
  } else {
    g.emit(r.output, "Transpose", {out}, {Attribute::ints("perm", {1, 0, 2})});
  }
}

}  // namespace

EmitterList transformer_emitters() {
  return {{"layer_norm", emit_layer_norm}, {"multihead_attention", emit_attention}};
}

}  // namespace cohort::io::detail
