// Recurrent layers and cells: parameters in PyTorch's layout and a time loop of differentiable ops.
#include "cohort/nn/rnn.h"

#include <algorithm>
#include <cmath>
#include <ostream>

#include "cohort/autograd/trace.h"
#include "cohort/autograd/function.h"
#include "cohort/nn/functional/activation.h"
#include "cohort/nn/init.h"
#include "cohort/nn/linear.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/linalg.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/rnn.h"
#include "cohort/ops/shape.h"
#include "ops/autocast_casts.h"

namespace cohort::nn {
namespace detail {
namespace {

const char* name_of(const RNNConfig& c) {
  switch (c.mode) {
    case RNNMode::LSTM: return c.cell ? "LSTMCell" : "LSTM";
    case RNNMode::GRU: return c.cell ? "GRUCell" : "GRU";
    default: return c.cell ? "RNNCell" : "RNN";
  }
}

int64_t gates_of(RNNMode mode) { return mode == RNNMode::LSTM ? 4 : mode == RNNMode::GRU ? 3 : 1; }
int64_t directions_of(const RNNConfig& c) { return c.bidirectional ? 2 : 1; }
int64_t out_size_of(const RNNConfig& c) { return c.proj_size > 0 ? c.proj_size : c.hidden_size; }
// Tensors per layer and direction: w_ih, w_hh, [b_ih, b_hh], [w_hr].
int64_t weights_per_direction(const RNNConfig& c) { return 2 + (c.bias ? 2 : 0) + (c.proj_size > 0 ? 1 : 0); }

Tensor hidden_projection(const Tensor& h, const Tensor& w_hh, const Tensor& b_hh) {
  return b_hh.defined() ? addmm(b_hh, h, w_hh.t()) : mm(h, w_hh.t());
}

// One step. xp: this step's input projection with b_ih, [N, G]; h: [N, Hout]; c: [N, hidden].
// w = {w_hh, b_hh, w_hr} (b_hh, w_hr possibly undefined). Returns h' (and c' for an LSTM).
std::vector<Tensor> step(RNNMode mode, const Tensor& xp, const Tensor& h, const Tensor& c, const Tensor& w_hh,
                         const Tensor& b_hh, const Tensor& w_hr) {
  Tensor hp = hidden_projection(h, w_hh, b_hh);
  switch (mode) {
    case RNNMode::RNNTanh: return {tanh(xp + hp)};
    case RNNMode::RNNReLU: return {relu(xp + hp)};
    case RNNMode::LSTM: {
      auto g = chunk(xp + hp, 4, 1);  // i, f, g, o
      Tensor c2 = sigmoid(g[1]) * c + sigmoid(g[0]) * tanh(g[2]);
      Tensor h2 = sigmoid(g[3]) * tanh(c2);
      if (w_hr.defined()) h2 = mm(h2, w_hr.t());
      return {h2, c2};
    }
    case RNNMode::GRU: {
      auto x = chunk(xp, 3, 1), y = chunk(hp, 3, 1);  // r, z, n
      Tensor r = sigmoid(x[0] + y[0]), z = sigmoid(x[1] + y[1]);
      Tensor n = tanh(x[2] + r * y[2]);
      return {n + z * (h - n)};
    }
  }
  return {};
}

// Steps of a packed batch (Note [Packed time loop]): bs[t] sequences run step t, longest first,
// and step t's rows start at offsets[t]. A padded batch [T, N, *] is the case bs[t] = N.
struct Steps {
  std::vector<int64_t> bs, offsets;  // offsets has T + 1 entries
  int64_t T() const { return static_cast<int64_t>(bs.size()); }
};

Steps uniform_steps(int64_t T, int64_t N) {
  Steps s{std::vector<int64_t>(static_cast<size_t>(T), N), {}};
  for (int64_t t = 0; t <= T; ++t) s.offsets.push_back(t * N);
  return s;
}

// The rows of x [R, *] cut into consecutive pieces of `sizes` rows, as one node: backward joins the
// pieces' gradients with one cat (zeros for a piece that got none). A view per step would cost each
// step's backward a zero-filled gradient of the whole of x, O(T^2) over a sequence.
struct SplitSteps : autograd::Function<SplitSteps> {
  static autograd::variable_list forward(autograd::AutogradContext* ctx, const Tensor& x, std::vector<int64_t> sizes) {
    ctx->set_materialize_grads(false);
    ctx->saved_data["sizes"] = sizes;
    std::vector<Tensor> pieces = split_with_sizes(x, sizes, 0);
    for (Tensor& p : pieces) p = p.clone();  // the outputs own their memory: x is not returned as views
    return pieces;
  }
  static autograd::variable_list backward(autograd::AutogradContext* ctx, autograd::variable_list grads) {
    std::vector<int64_t> sizes = ctx->saved_data["sizes"].toIntVector();
    const Tensor* any = nullptr;
    for (const Tensor& g : grads)
      if (g.defined()) any = &g;
    if (!any) return {Tensor(), Tensor()};
    for (size_t i = 0; i < grads.size(); ++i)
      if (!grads[i].defined()) {
        Shape shape = any->sizes().vec();
        shape[0] = sizes[i];
        grads[i] = zeros(shape, any->options());
      }
    return {cat(grads, 0), Tensor()};
  }
};

// Note [Packed time loop]
// Sequences are sorted longest first, so the ones running at step t are rows [0, bs[t]) of the
// state. Forward in time the state shrinks: when bs drops, the rows that stop are final states and
// are set aside; the final state of the batch is the rows still running at the end followed by the
// rows set aside, latest first. In reverse the state grows: a sequence starts at its own last step,
// from its row of h0, appended when bs grows. A padded batch never shrinks or grows.

// One layer in one direction over the packed rows x [rows, I]: returns the outputs [rows, Hout]
// and the final h (and c), [N, *].
std::vector<Tensor> run_direction(const RNNConfig& c, const Tensor* w, const Tensor& x, const Steps& steps, Tensor h0,
                                  Tensor c0, bool reverse) {
  const int64_t T = steps.T(), N = h0.size(0);
  Tensor b_ih = c.bias ? w[2] : Tensor(), b_hh = c.bias ? w[3] : Tensor();
  Tensor w_hr = c.proj_size > 0 ? w[c.bias ? 4 : 2] : Tensor();
  // The whole sequence's input projection in one matmul.
  Tensor xp = functional::linear(x, w[0], b_ih);
  // An LSTM over a padded batch (every step all N rows), without projection: the fused time loop
  // (Note [Fused LSTM layer] in src/ops/lstm.cpp).
  const bool padded = std::all_of(steps.bs.begin(), steps.bs.end(), [&](int64_t b) { return b == N; });
  if (c.mode == RNNMode::LSTM && !w_hr.defined() && padded &&
      (x.dtype() == kFloat32 || x.dtype() == kFloat64))
    return lstm_layer(xp, h0, c0, w[1], b_hh, reverse);
  // Each step's rows, behind one autograd node (SplitSteps).
  std::vector<int64_t> rows(steps.bs.begin(), steps.bs.end());
  std::vector<Tensor> step_inputs = T == 1 ? std::vector<Tensor>{xp} : SplitSteps::apply(xp, rows);
  auto step_input = [&](int64_t t) { return step_inputs[static_cast<size_t>(t)]; };
  const bool lstm = c0.defined();
  std::vector<Tensor> outs(static_cast<size_t>(T)), done_h, done_c;
  Tensor h = h0, cs = c0;
  int64_t running = N;
  if (reverse && steps.bs.back() < N) {
    running = steps.bs.back();
    h = h0.narrow(0, 0, running);
    if (lstm) cs = c0.narrow(0, 0, running);
  }
  for (int64_t s = 0; s < T; ++s) {
    const int64_t t = reverse ? T - 1 - s : s, bt = steps.bs[static_cast<size_t>(t)];
    if (bt < running) {  // forward: sequences end
      done_h.push_back(h.narrow(0, bt, running - bt));
      h = h.narrow(0, 0, bt);
      if (lstm) {
        done_c.push_back(cs.narrow(0, bt, running - bt));
        cs = cs.narrow(0, 0, bt);
      }
    } else if (bt > running) {  // reverse: sequences start
      h = cat({h, h0.narrow(0, running, bt - running)}, 0);
      if (lstm) cs = cat({cs, c0.narrow(0, running, bt - running)}, 0);
    }
    running = bt;
    auto next = step(c.mode, step_input(t), h, cs, w[1], b_hh, w_hr);
    h = next[0];
    if (lstm) cs = next[1];
    outs[static_cast<size_t>(t)] = h;
  }
  auto final_state = [](Tensor last, std::vector<Tensor>& done) {
    if (done.empty()) return last;
    done.push_back(last);
    std::reverse(done.begin(), done.end());
    return cat(done, 0);
  };
  return {outs.size() == 1 ? outs[0] : cat(outs, 0), final_state(h, done_h), lstm ? final_state(cs, done_c) : Tensor()};
}

// An initial state: `given` checked against [L*D, N, size] (unbatched: [L*D, size]), or zeros.
Tensor initial_state(const RNNConfig& c, const Tensor& given, const char* what, const Tensor& x, int64_t N,
                     bool batched, int64_t size) {
  const int64_t LD = c.num_layers * directions_of(c);
  if (!given.defined()) return zeros({LD, N, size}, TensorOptions(x.dtype()).device(x.device()));
  Shape want = batched ? Shape{LD, N, size} : Shape{LD, size};
  COHORT_CHECK(given.dim() == (batched ? 3 : 2), name_of(c), ": for ", batched ? "batched 3-d" : "unbatched 2-d",
               " input, ", what, " should be ", batched ? "3-d" : "2-d", " of shape ", want, ", got shape ",
               given.sizes());
  const char* last = c.proj_size > 0 && size == c.proj_size ? "proj_size" : "hidden_size";
  COHORT_CHECK(given.sizes() == want, name_of(c), ": expected ", what, " of shape ", want, " (num_layers * num_directions, ",
               batched ? "batch, " : "", last, "), got ", given.sizes());
  COHORT_CHECK(given.dtype() == x.dtype(), name_of(c), ": ", what, " has dtype ", given.dtype(),
               " but the input has ", x.dtype());
  return batched ? given : given.unsqueeze(1);
}

void check_input(const RNNConfig& c, const Tensor& input, int64_t batched_dim, const std::vector<Tensor>& w) {
  COHORT_CHECK(input.defined(), name_of(c), ": the input is undefined");
  COHORT_CHECK(input.dim() == batched_dim || input.dim() == batched_dim - 1, name_of(c), ": expected a ",
               batched_dim - 1, "-d (unbatched) or ", batched_dim, "-d (batched) input, got a ", input.dim(),
               "-d input of shape ", input.sizes());
  COHORT_CHECK(input.size(-1) == c.input_size, name_of(c), ": expected input_size=", c.input_size,
               " features in the input's last dim, got input of shape ", input.sizes());
  COHORT_CHECK(input.dtype() == w[0].dtype(), name_of(c), ": the input has dtype ", input.dtype(),
               " but the parameters have ", w[0].dtype(), "; hint: convert one, e.g. module->to(", input.dtype(), ")");
}

}  // namespace

std::vector<Tensor> register_rnn_weights(Module& m, const RNNConfig& c) {
  const char* name = name_of(c);
  COHORT_CHECK(c.input_size >= 0, name, ": input_size must be non-negative, got ", c.input_size);
  COHORT_CHECK(c.hidden_size > 0, name, ": hidden_size must be greater than zero, got ", c.hidden_size);
  COHORT_CHECK(c.num_layers > 0, name, ": num_layers must be greater than zero, got ", c.num_layers);
  COHORT_CHECK(c.dropout >= 0 && c.dropout <= 1, name,
               ": dropout should be a number in [0, 1] (the probability of zeroing an element), got ", c.dropout);
  COHORT_CHECK(c.proj_size >= 0 && c.proj_size < c.hidden_size, name,
               ": proj_size must be zero (no projection) or positive and smaller than hidden_size=", c.hidden_size,
               ", got ", c.proj_size);
  const int64_t G = gates_of(c.mode) * c.hidden_size, H = c.hidden_size, Hout = out_size_of(c);
  std::vector<Tensor> w;
  for (int64_t layer = 0; layer < c.num_layers; ++layer) {
    for (int64_t d = 0; d < directions_of(c); ++d) {
      std::string sfx = c.cell ? "" : "_l" + std::to_string(layer) + (d == 1 ? "_reverse" : "");
      int64_t in = layer == 0 ? c.input_size : Hout * directions_of(c);
      w.push_back(m.register_parameter("weight_ih" + sfx, empty({G, in})));
      w.push_back(m.register_parameter("weight_hh" + sfx, empty({G, Hout})));
      if (c.bias) {
        w.push_back(m.register_parameter("bias_ih" + sfx, empty({G})));
        w.push_back(m.register_parameter("bias_hh" + sfx, empty({G})));
      }
      if (c.proj_size > 0) w.push_back(m.register_parameter("weight_hr" + sfx, empty({c.proj_size, H})));
    }
  }
  return w;
}

void reset_rnn_parameters(const RNNConfig& c, const std::vector<Tensor>& weights) {
  double bound = 1.0 / std::sqrt(static_cast<double>(c.hidden_size));
  for (const Tensor& w : weights) init::uniform_(w, -bound, bound);
}

void print_rnn(std::ostream& os, const RNNConfig& c) {
  os << name_of(c) << "(" << c.input_size << ", " << c.hidden_size;
  if (c.proj_size != 0) os << ", proj_size=" << c.proj_size;
  if (c.num_layers != 1) os << ", num_layers=" << c.num_layers;
  if (!c.bias) os << ", bias=False";
  if (c.batch_first) os << ", batch_first=True";
  if (c.dropout != 0) os << ", dropout=" << c.dropout;
  if (c.bidirectional) os << ", bidirectional=True";
  if (c.cell && c.mode == RNNMode::RNNReLU) os << ", nonlinearity=relu";
  os << ")";
}

namespace {

// Every layer over the packed rows x [rows, I] (sorted order); h0, c0 [L*D, N, *]. Returns the
// last layer's rows [rows, D*Hout] and the final states, [L*D, N, *] each.
std::pair<Tensor, std::vector<Tensor>> run_layers(const RNNConfig& c, const std::vector<Tensor>& weights,
                                                  bool training, Tensor x, const Steps& steps, const Tensor& h0,
                                                  const Tensor& c0) {
  const bool lstm = c.mode == RNNMode::LSTM;
  const int64_t D = directions_of(c), per = weights_per_direction(c);
  std::vector<Tensor> hn, cn;
  for (int64_t layer = 0; layer < c.num_layers; ++layer) {
    std::vector<Tensor> outs;
    for (int64_t d = 0; d < D; ++d) {
      int64_t k = layer * D + d;
      auto r = run_direction(c, &weights[static_cast<size_t>(k * per)], x, steps, select(h0, 0, k),
                             lstm ? select(c0, 0, k) : Tensor(), d == 1);
      outs.push_back(r[0]);
      hn.push_back(r[1]);
      if (lstm) cn.push_back(r[2]);
    }
    x = D == 1 ? outs[0] : cat(outs, 1);
    if (training && c.dropout > 0 && layer + 1 < c.num_layers) x = functional::dropout(x, c.dropout, true);
  }
  std::vector<Tensor> states{stack(hn, 0)};
  if (lstm) states.push_back(stack(cn, 0));
  return {x, states};
}

// Under autocast (ops/autocast.h) a recurrent layer computes as PyTorch 1.13's does: RNN (tanh, relu)
// in the autocast dtype, as its steps are linear layers there; LSTM and GRU in their input's dtype,
// their parameters and initial states cast to it (float32 stays float32). float64 is never cast.
DType autocast_dtype(const RNNConfig& c, DType input) {
  const bool plain = c.mode == RNNMode::RNNTanh || c.mode == RNNMode::RNNReLU;
  return plain && input != kFloat64 ? autocast::get_autocast_cpu_dtype() : input;
}

Tensor cast_to(const Tensor& t, DType dtype) {
  if (!t.defined() || !t.is_floating_point() || t.dtype() == dtype || t.dtype() == kFloat64) return t;
  return dtype == autocast::get_autocast_cpu_dtype() ? autocast::to_lower(t) : t.to(dtype);
}

std::vector<Tensor> cast_all(std::vector<Tensor> tensors, DType dtype) {
  for (Tensor& t : tensors) t = cast_to(t, dtype);
  return tensors;
}

}  // namespace

std::pair<Tensor, std::vector<Tensor>> rnn_forward(const RNNConfig& c, const std::vector<Tensor>& weights,
                                                   bool training, const Tensor& input, std::vector<Tensor> hx) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    const DType dtype = autocast_dtype(c, input.dtype());
    return rnn_forward(c, cast_all(weights, dtype), training, cast_to(input, dtype), cast_all(std::move(hx), dtype));
  }
  check_input(c, input, 3, weights);
  const bool batched = input.dim() == 3, lstm = c.mode == RNNMode::LSTM;
  // An LSTM reports as one op (the exporter maps it to ONNX's LSTM), with its initial states
  // (undefined when absent: zeros) and its weights; the ops inside run unrecorded.
  trace::OpScope trace(lstm ? "lstm" : c.mode == RNNMode::GRU ? "gru" : "rnn");
  if (trace) {
    trace.refuse_if(c.proj_size > 0, "with proj_size > 0 (ONNX's LSTM has no projection)");
    trace.refuse_if(training && c.dropout > 0 && c.num_layers > 1,
                    "in training mode with dropout between layers; hint: call eval() first");
  }
  // Time-major [T, N, I] inside.
  Tensor x = !batched ? input.unsqueeze(1) : c.batch_first ? input.transpose(0, 1) : input;
  COHORT_CHECK(x.size(0) > 0, name_of(c), ": expected a sequence of at least one step, got input of shape ",
               input.sizes());
  const int64_t T = x.size(0), N = x.size(1);
  hx.resize(lstm ? 2 : 1);
  Tensor h0 = initial_state(c, hx[0], lstm ? "h0 (hx[0])" : "h0 (hx)", x, N, batched, out_size_of(c));
  Tensor c0 = lstm ? initial_state(c, hx[1], "c0 (hx[1])", x, N, batched, c.hidden_size) : Tensor();
  auto [rows, states] = run_layers(c, weights, training, x.reshape({T * N, x.size(2)}), uniform_steps(T, N), h0, c0);
  Tensor out = rows.view({T, N, rows.size(1)});
  if (!batched) {
    out = out.squeeze(1);
    for (Tensor& s : states) s = s.squeeze(1);
  } else if (c.batch_first) {
    out = out.transpose(0, 1);
  }
  if (trace) {
    std::vector<Tensor> inputs{input, hx[0]};
    if (lstm) inputs.push_back(hx[1]);
    inputs.insert(inputs.end(), weights.begin(), weights.end());
    std::vector<trace::Attr> attrs{{"hidden_size", c.hidden_size}, {"num_layers", c.num_layers},
                                   {"bias", int64_t{c.bias}}, {"batch_first", int64_t{c.batch_first}},
                                   {"bidirectional", int64_t{c.bidirectional}}};
    if (!lstm && c.mode != RNNMode::GRU)
      attrs.push_back({"nonlinearity", std::string(c.mode == RNNMode::RNNReLU ? "relu" : "tanh")});
    // The final states, [layers * directions, N, H] as returned, are outputs of the record too.
    trace.record(std::move(inputs), out, std::move(attrs), batched ? states : std::vector<Tensor>{});
  }
  return {out, states};
}

std::pair<utils::rnn::PackedSequence, std::vector<Tensor>> rnn_forward_packed(const RNNConfig& c,
                                                                            const std::vector<Tensor>& weights,
                                                                            bool training,
                                                                            const utils::rnn::PackedSequence& input,
                                                                            std::vector<Tensor> hx) {
  if (autocast::active() && input.data().defined()) {
    autocast::CastOpScope cast;
    const DType dtype = autocast_dtype(c, input.data().dtype());
    utils::rnn::PackedSequence cast_input(cast_to(input.data(), dtype), input.batch_sizes(), input.sorted_indices(),
                                          input.unsorted_indices());
    return rnn_forward_packed(c, cast_all(weights, dtype), training, cast_input, cast_all(std::move(hx), dtype));
  }
  const Tensor& data = input.data();
  COHORT_CHECK(input.defined() && data.dim() == 2, name_of(c), ": a PackedSequence's data should be 2-d [steps, ",
               "input_size], got ", data.defined() ? data.sizes().vec() : Shape{});
  check_input(c, data, 2, weights);
  const bool lstm = c.mode == RNNMode::LSTM;
  Steps steps;
  const Tensor bs = input.batch_sizes().contiguous();
  steps.bs.assign(bs.data_ptr<int64_t>(), bs.data_ptr<int64_t>() + bs.numel());
  COHORT_CHECK(!steps.bs.empty(), name_of(c), ": the PackedSequence has no steps");
  steps.offsets.push_back(0);
  for (int64_t b : steps.bs) steps.offsets.push_back(steps.offsets.back() + b);
  COHORT_CHECK(steps.offsets.back() == data.size(0), name_of(c), ": the PackedSequence's batch_sizes add up to ",
               steps.offsets.back(), " steps but its data has ", data.size(0), " rows");
  const int64_t N = steps.bs[0];
  hx.resize(lstm ? 2 : 1);
  // Initial states come in the batch's original order; the loop runs in sorted order.
  const Tensor& sorted = input.sorted_indices();
  auto in_sorted_order = [&](const Tensor& t) { return t.defined() && sorted.defined() ? t.index_select(1, sorted) : t; };
  Tensor h0 = in_sorted_order(initial_state(c, hx[0], lstm ? "h0 (hx[0])" : "h0 (hx)", data, N, true, out_size_of(c)));
  Tensor c0 = lstm ? in_sorted_order(initial_state(c, hx[1], "c0 (hx[1])", data, N, true, c.hidden_size)) : Tensor();
  auto [rows, states] = run_layers(c, weights, training, data, steps, h0, c0);
  const Tensor& unsorted = input.unsorted_indices();
  if (unsorted.defined())
    for (Tensor& s : states) s = s.index_select(1, unsorted);
  return {utils::rnn::PackedSequence(rows, input.batch_sizes(), input.sorted_indices(), input.unsorted_indices()),
          states};
}

std::vector<Tensor> rnn_cell_forward(const RNNConfig& c, const std::vector<Tensor>& w, const Tensor& input,
                                     std::vector<Tensor> hx) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    const DType dtype = autocast_dtype(c, input.dtype());
    return rnn_cell_forward(c, cast_all(w, dtype), cast_to(input, dtype), cast_all(std::move(hx), dtype));
  }
  check_input(c, input, 2, w);
  const bool batched = input.dim() == 2, lstm = c.mode == RNNMode::LSTM;
  Tensor x = batched ? input : input.unsqueeze(0);
  const int64_t N = x.size(0), H = c.hidden_size;
  hx.resize(lstm ? 2 : 1);
  for (size_t i = 0; i < hx.size(); ++i) {
    const char* what = !lstm ? "hx" : i == 0 ? "hx[0] (h)" : "hx[1] (c)";
    if (!hx[i].defined()) {
      hx[i] = zeros({N, H}, TensorOptions(x.dtype()).device(x.device()));
      continue;
    }
    Shape want = batched ? Shape{N, H} : Shape{H};
    COHORT_CHECK(hx[i].sizes() == want, name_of(c), ": expected ", what, " of shape ", want,
                 batched ? " (batch, hidden_size)" : " (hidden_size)", " for input of shape ", input.sizes(), ", got ",
                 hx[i].sizes());
    if (!batched) hx[i] = hx[i].unsqueeze(0);
  }
  Tensor b_ih = c.bias ? w[2] : Tensor(), b_hh = c.bias ? w[3] : Tensor();
  auto out = step(c.mode, functional::linear(x, w[0], b_ih), hx[0], lstm ? hx[1] : Tensor(), w[1], b_hh, Tensor());
  if (!batched)
    for (Tensor& t : out) t = t.squeeze(0);
  return out;
}

}  // namespace detail

namespace {

using detail::RNNConfig;
using detail::RNNMode;
using utils::rnn::PackedSequence;

template <class Options>
RNNConfig layer_config(RNNMode mode, const Options& o) {
  RNNConfig c{mode, o.input_size(), o.hidden_size()};
  c.num_layers = o.num_layers();
  c.bias = o.bias();
  c.batch_first = o.batch_first();
  c.dropout = o.dropout();
  c.bidirectional = o.bidirectional();
  return c;
}

template <class Options>
RNNConfig cell_config(RNNMode mode, const Options& o) {
  RNNConfig c{mode, o.input_size(), o.hidden_size()};
  c.bias = o.bias();
  c.cell = true;
  return c;
}

RNNMode rnn_mode(const RNNOptions::nonlinearity_t& n) {
  return std::holds_alternative<enumtype::kReLU>(n) ? RNNMode::RNNReLU : RNNMode::RNNTanh;
}

}  // namespace

RNNImpl::RNNImpl(const RNNOptions& options_) : options(options_) { reset(); }
RNNConfig RNNImpl::config() const { return layer_config(rnn_mode(options.nonlinearity()), options); }
std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, Tensor hx) {
  auto [out, states] = detail::rnn_forward(config(), flat_weights_, is_training(), input, {hx});
  return {out, states[0]};
}
std::tuple<PackedSequence, Tensor> RNNImpl::forward_with_packed_input(const PackedSequence& input, Tensor hx) {
  auto [out, states] = detail::rnn_forward_packed(config(), flat_weights_, is_training(), input, {hx});
  return {out, states[0]};
}

LSTMImpl::LSTMImpl(const LSTMOptions& options_) : options(options_) { reset(); }
RNNConfig LSTMImpl::config() const {
  RNNConfig c = layer_config(RNNMode::LSTM, options);
  c.proj_size = options.proj_size();
  return c;
}
std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(const Tensor& input,
                                                                 std::optional<std::tuple<Tensor, Tensor>> hx) {
  std::vector<Tensor> h;
  if (hx) h = {std::get<0>(*hx), std::get<1>(*hx)};
  auto [out, states] = detail::rnn_forward(config(), flat_weights_, is_training(), input, h);
  return {out, {states[0], states[1]}};
}
std::tuple<PackedSequence, std::tuple<Tensor, Tensor>> LSTMImpl::forward_with_packed_input(
    const PackedSequence& input, std::optional<std::tuple<Tensor, Tensor>> hx) {
  std::vector<Tensor> h;
  if (hx) h = {std::get<0>(*hx), std::get<1>(*hx)};
  auto [out, states] = detail::rnn_forward_packed(config(), flat_weights_, is_training(), input, h);
  return {out, {states[0], states[1]}};
}

GRUImpl::GRUImpl(const GRUOptions& options_) : options(options_) { reset(); }
RNNConfig GRUImpl::config() const { return layer_config(RNNMode::GRU, options); }
std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, Tensor hx) {
  auto [out, states] = detail::rnn_forward(config(), flat_weights_, is_training(), input, {hx});
  return {out, states[0]};
}
std::tuple<PackedSequence, Tensor> GRUImpl::forward_with_packed_input(const PackedSequence& input, Tensor hx) {
  auto [out, states] = detail::rnn_forward_packed(config(), flat_weights_, is_training(), input, {hx});
  return {out, states[0]};
}

RNNCellImpl::RNNCellImpl(const RNNCellOptions& options_) : options(options_) { reset(); }
RNNConfig RNNCellImpl::config() const { return cell_config(rnn_mode(options.nonlinearity()), options); }
Tensor RNNCellImpl::forward(const Tensor& input, Tensor hx) {
  return detail::rnn_cell_forward(config(), weights(), input, {hx})[0];
}

LSTMCellImpl::LSTMCellImpl(const LSTMCellOptions& options_) : options(options_) { reset(); }
RNNConfig LSTMCellImpl::config() const { return cell_config(RNNMode::LSTM, options); }
std::tuple<Tensor, Tensor> LSTMCellImpl::forward(const Tensor& input, std::optional<std::tuple<Tensor, Tensor>> hx) {
  std::vector<Tensor> h;
  if (hx) h = {std::get<0>(*hx), std::get<1>(*hx)};
  auto out = detail::rnn_cell_forward(config(), weights(), input, h);
  return {out[0], out[1]};
}

GRUCellImpl::GRUCellImpl(const GRUCellOptions& options_) : options(options_) { reset(); }
RNNConfig GRUCellImpl::config() const { return cell_config(RNNMode::GRU, options); }
Tensor GRUCellImpl::forward(const Tensor& input, Tensor hx) {
  return detail::rnn_cell_forward(config(), weights(), input, {hx})[0];
}

}  // namespace cohort::nn
