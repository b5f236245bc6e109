// ONNX emitters for the ops of sequence models: the embedding lookup (Gather) and the recurrent layers
// (ONNX's LSTM, GRU and RNN operators, one node per layer, the weights regrouped into ONNX's gate order).
#include <string>
#include <vector>

#include "cohort/core/error.h"
#include "cohort/ops/shape.h"
#include "io/onnx_graph.h"

namespace cohort::io::detail {

namespace {

// The three recurrent layers, as ONNX's LSTM, GRU and RNN operators see them: how many initial states
// the trace carries (h0, and c0 for an LSTM), how many gates are stacked in a weight's rows, and how
// cohort's (PyTorch's) gate order maps to ONNX's.
struct Recurrent {
  const char* onnx_op;
  int64_t states, gates;
  std::vector<int64_t> onnx_gate_order;  // cohort's gate index of each of ONNX's gates, in ONNX's order
};

// LSTM: cohort stacks i, f, g, o; ONNX reads i, o, f, c (c is cohort's g, the cell candidate).
// GRU: cohort stacks r, z, n; ONNX reads z, r, h (h is cohort's n). RNN: one gate.
const Recurrent kLstm{"LSTM", 2, 4, {0, 3, 1, 2}};
const Recurrent kGru{"GRU", 1, 3, {1, 0, 2}};
const Recurrent kRnn{"RNN", 1, 1, {0}};

// w: [gates * H, *] or [gates * H] in cohort's gate order -> the same rows in ONNX's.
Tensor to_onnx_gate_order(const Recurrent& kind, const Tensor& w) {
  if (kind.gates == 1) return w.detach();
  auto gates = chunk(w.detach(), kind.gates, 0);
  std::vector<Tensor> ordered;
  for (int64_t k : kind.onnx_gate_order) ordered.push_back(gates[static_cast<size_t>(k)]);
  return cat(ordered, 0);
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

// The attributes that make ONNX's operator compute what cohort's layer does.
std::vector<Attribute> recurrent_attrs(const Recurrent& kind, const trace::Record& r, int64_t D) {
  std::vector<Attribute> attrs{Attribute::i("hidden_size", r.int_attr("hidden_size"))};
  if (D == 2) attrs.push_back(Attribute::s("direction", "bidirectional"));
  // PyTorch's GRU applies the reset gate after the hidden state's matrix product and bias:
  // n = tanh(W_in x + b_in + r * (W_hn h + b_hn)); ONNX's default applies it before.
  if (&kind == &kGru) attrs.push_back(Attribute::i("linear_before_reset", 1));
  if (&kind == &kRnn) {
    const std::string f = r.string_attr("nonlinearity") == "relu" ? "Relu" : "Tanh";
    attrs.push_back(Attribute::strings("activations", std::vector<std::string>(static_cast<size_t>(D), f)));
  }
  return attrs;
}

// inputs: x, the initial states (h0, and c0 for an LSTM; undefined when absent: zeros), then per layer
// and direction w_ih, w_hh, [b_ih, b_hh]; x is [N, T, I] (batch_first) or [T, N, I]; the output is
// the last layer's h at every step, the same layout, with D * H features. One ONNX node per layer.
void emit_recurrent(Graph& g, const trace::Record& r, const Recurrent& kind) {
  const Tensor& x = r.inputs[0];
  COHORT_CHECK(x.dim() == 3, r.op, ": an unbatched input (", x.sizes(), ") cannot be exported; hint: unsqueeze it "
               "to a batch of one");
  const int64_t H = r.int_attr("hidden_size"), L = r.int_attr("num_layers");
  const bool bias = r.int_attr("bias") != 0, batch_first = r.int_attr("batch_first") != 0;
  const int64_t D = r.int_attr("bidirectional") ? 2 : 1, per = bias ? 4 : 2, first_weight = 1 + kind.states;
  COHORT_CHECK(static_cast<int64_t>(r.inputs.size()) == first_weight + L * D * per, r.op, ": the trace has ",
               r.inputs.size(), " inputs for ", L, " layers; this is a bug in the exporter");
  // ONNX's recurrent operators are time-major: X [T, N, I], Y [T, D, N, H].
  std::string cur = g.value(x, r.op);
  if (batch_first) cur = g.node("Transpose", {cur}, {Attribute::ints("perm", {1, 0, 2})});
  auto layer_state = [&](const Tensor& s, int64_t layer) -> std::string {
    if (!s.defined()) return "";  // an absent initial state is zeros in ONNX too
    return g.node("Slice", {g.value(s, r.op), g.constant_ints({layer * D}), g.constant_ints({(layer + 1) * D}),
                            g.constant_ints({0})});
  };
  // Per state (h, and c for an LSTM) each layer's final value; the record's extra outputs, when the
  // forward returned them, are these joined over the layers: [L * D, N, H], PyTorch's h_n and c_n.
  std::vector<std::vector<std::string>> final_states(r.extra_outputs.size());
  for (int64_t layer = 0; layer < L; ++layer) {
    std::vector<Tensor> w, rw, b;
    for (int64_t d = 0; d < D; ++d) {
      const Tensor* p = &r.inputs[static_cast<size_t>(first_weight + (layer * D + d) * per)];
      w.push_back(to_onnx_gate_order(kind, p[0]));
      rw.push_back(to_onnx_gate_order(kind, p[1]));
      if (bias) b.push_back(cat({to_onnx_gate_order(kind, p[2]), to_onnx_gate_order(kind, p[3])}, 0));
    }
    const Tensor& first = r.inputs[static_cast<size_t>(first_weight + layer * D * per)];
    std::vector<std::string> inputs{cur, g.constant(stack(w, 0), weight_name(g, first, "W", layer)),
                                    g.constant(stack(rw, 0), weight_name(g, first, "R", layer)),
                                    bias ? g.constant(stack(b, 0), weight_name(g, first, "B", layer)) : "",
                                    /*sequence_lens=*/""};
    for (int64_t s = 0; s < kind.states; ++s) inputs.push_back(layer_state(r.inputs[static_cast<size_t>(1 + s)], layer));
    while (inputs.back().empty()) inputs.pop_back();  // trailing optional inputs are left out
    // Outputs Y, Y_h (and Y_c): the final states of this layer, [D, N, H] each.
    const auto outs = g.node_outputs(kind.onnx_op, inputs, recurrent_attrs(kind, r, D),
                                     1 + static_cast<size_t>(kind.states));
    const std::string& y = outs[0];
    for (size_t s = 0; s < final_states.size(); ++s) final_states[s].push_back(outs[1 + s]);
    // [T, D, N, H] -> [T, N, D * H], the next layer's input: with one direction a Reshape (rather
    // than a Squeeze, whose axes became an input in opset 13, which older runtimes do not read).
    cur = D == 1 ? g.node("Reshape", {y, g.constant_ints({0, -1, H})})
                 : g.node("Reshape", {g.node("Transpose", {y}, {Attribute::ints("perm", {0, 2, 1, 3})}),
                                      g.constant_ints({0, 0, -1})});
  }
  for (size_t s = 0; s < final_states.size(); ++s) {
    const auto& per_layer = final_states[s];
    g.bind(r.extra_outputs[s], per_layer.size() == 1 ? per_layer[0]
                                                     : g.node("Concat", per_layer, {Attribute::i("axis", 0)}));
  }
  if (batch_first) {
    g.emit(r.output, "Transpose", {cur}, {Attribute::ints("perm", {1, 0, 2})});
  } else {
    g.emit(r.output, "Identity", {cur});
  }
}

}  // namespace

EmitterList sequence_emitters() {
  return {
      {"embedding", [](Graph& g, const trace::Record& r) {
         // A row of the weight per id: out[..., :] = weight[ids[...], :].
         g.emit(r.output, "Gather", {g.value(r.inputs[0], r.op), g.value(r.inputs[1], r.op)},
                {Attribute::i("axis", 0)});
       }},
      {"lstm", [](Graph& g, const trace::Record& r) { emit_recurrent(g, r, kLstm); }},
      {"gru", [](Graph& g, const trace::Record& r) { emit_recurrent(g, r, kGru); }},
      {"rnn", [](Graph& g, const trace::Record& r) { emit_recurrent(g, r, kRnn); }},
  };
}

}  // namespace cohort::io::detail
