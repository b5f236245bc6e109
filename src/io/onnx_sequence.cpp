// ONNX emitters for the ops of sequence models: the embedding lookup (Gather) and the LSTM (ONNX's
// LSTM operator, one node per layer, its weights regrouped into ONNX's gate order).
#include <string>
#include <vector>

#include "cohort/core/error.h"
#include "cohort/ops/shape.h"
#include "io/onnx_graph.h"

namespace cohort::io::detail {

namespace {

// cohort (as PyTorch) stacks an LSTM's gate rows as i, f, g, o; ONNX's LSTM reads them as i, o, f, c
// (c is cohort's g, the cell candidate). w: [4H, *] or [4H].
Tensor to_onnx_gate_order(const Tensor& w) {
  auto gates = chunk(w.detach(), 4, 0);
  return cat({gates[0], gates[3], gates[1], gates[2]}, 0);
}

// The initializer name for an ONNX weight of the layer whose cohort weight is `like`: beside it in the
// state_dict ("lstm.weight_ih_l0" -> "lstm.onnx_W_l0"), or empty (a "const_<k>") for a tensor the
// module does not hold.
std::string weight_name(const Graph& g, const Tensor& like, const std::string& what, int64_t layer) {
  const std::string name = g.module_name(like);
  if (name.empty()) return "";
  const auto dot = name.rfind('.');
  return (dot == std::string::npos ? "" : name.substr(0, dot + 1)) + "onnx_" + what + "_l" + std::to_string(layer);
}

// inputs: x, h0, c0 (undefined when absent: zeros), then per layer and direction w_ih, w_hh, [b_ih,
// b_hh]; x is [N, T, I] (batch_first) or [T, N, I]; the output is the last layer's h at every step,
// the same layout, with D * H features.
void emit_lstm(Graph& g, const trace::Record& r) {
  const Tensor& x = r.inputs[0];
  const Tensor &h0 = r.inputs[1], &c0 = r.inputs[2];
  COHORT_CHECK(x.dim() == 3, "lstm: an unbatched input (", x.sizes(), ") cannot be exported; hint: unsqueeze it "
               "to a batch of one");
  const int64_t H = r.int_attr("hidden_size"), L = r.int_attr("num_layers");
  const bool bias = r.int_attr("bias") != 0, batch_first = r.int_attr("batch_first") != 0;
  const int64_t D = r.int_attr("bidirectional") ? 2 : 1, per = bias ? 4 : 2;
  COHORT_CHECK(static_cast<int64_t>(r.inputs.size()) == 3 + L * D * per, "lstm: the trace has ", r.inputs.size(),
               " inputs for ", L, " layers; this is a bug in the exporter");
  // ONNX's LSTM is time-major: X [T, N, I], Y [T, D, N, H].
  std::string cur = g.value(x, r.op);
  if (batch_first) cur = g.node("Transpose", {cur}, {Attribute::ints("perm", {1, 0, 2})});
  auto layer_state = [&](const Tensor& s, int64_t layer) -> std::string {
    if (!s.defined()) return "";  // an absent initial state is zeros in ONNX too
    return g.node("Slice", {g.value(s, r.op), g.constant_ints({layer * D}), g.constant_ints({(layer + 1) * D}),
                            g.constant_ints({0})});
  };
  for (int64_t layer = 0; layer < L; ++layer) {
    std::vector<Tensor> w, rw, b;
    for (int64_t d = 0; d < D; ++d) {
      const Tensor* p = &r.inputs[static_cast<size_t>(3 + (layer * D + d) * per)];
      w.push_back(to_onnx_gate_order(p[0]));
      rw.push_back(to_onnx_gate_order(p[1]));
      if (bias) b.push_back(cat({to_onnx_gate_order(p[2]), to_onnx_gate_order(p[3])}, 0));
    }
    const Tensor& first = r.inputs[static_cast<size_t>(3 + layer * D * per)];
    std::vector<std::string> inputs{cur, g.constant(stack(w, 0), weight_name(g, first, "W", layer)),
                                    g.constant(stack(rw, 0), weight_name(g, first, "R", layer)),
                                    bias ? g.constant(stack(b, 0), weight_name(g, first, "B", layer)) : "",
                                    /*sequence_lens=*/"", layer_state(h0, layer), layer_state(c0, layer)};
    while (inputs.back().empty()) inputs.pop_back();  // trailing optional inputs are left out
    std::vector<Attribute> attrs{Attribute::i("hidden_size", H)};
    if (D == 2) attrs.push_back(Attribute::s("direction", "bidirectional"));
    const std::string y = g.node("LSTM", inputs, std::move(attrs));
    // [T, D, N, H] -> [T, N, D * H], the next layer's input: with one direction a Reshape (rather
    // than a Squeeze, whose axes became an input in opset 13, which older runtimes do not read).
    cur = D == 1 ? g.node("Reshape", {y, g.constant_ints({0, -1, H})})
                 : g.node("Reshape", {g.node("Transpose", {y}, {Attribute::ints("perm", {0, 2, 1, 3})}),
                                      g.constant_ints({0, 0, -1})});
  }
  if (batch_first) {
    g.emit(r.output, "Transpose", {cur}, {Attribute::ints("perm", {1, 0, 2})});
  } else {
    g.emit(r.output, "Identity", {cur});
  }
}

}  // namespace

bool emit_sequence_op(Graph& g, const trace::Record& r) {
  if (r.op == "embedding") {
    // A row of the weight per id: out[..., :] = weight[ids[...], :].
    g.emit(r.output, "Gather", {g.value(r.inputs[0], r.op), g.value(r.inputs[1], r.op)}, {Attribute::i("axis", 0)});
    return true;
  }
  if (r.op == "lstm") {
    emit_lstm(g, r);
    return true;
  }
  return false;
}

}  // namespace cohort::io::detail
