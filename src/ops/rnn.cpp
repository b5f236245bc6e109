// The recurrent layers (lstm, gru, rnn_tanh, rnn_relu over a padded or a packed batch): each layer
// and direction a time loop of the cells' step (rnn_cell.cpp), or lstm_layer's fused loop (lstm.cpp).
#include "cohort/ops/rnn.h"

#include <algorithm>
#include <string>

#include "cohort/autograd/function.h"
#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/dropout.h"
#include "cohort/ops/linalg.h"
#include "cohort/ops/shape.h"
#include "ops/autocast_casts.h"
#include "ops/rnn_internal.h"

namespace cohort {
namespace {

using detail::RecurrentMode;

Shape shape_of(const Tensor& t) { return t.defined() ? t.sizes().vec() : Shape{}; }

// How a layer op was called.
struct Layers {
  const char* op;
  RecurrentMode mode;
  bool bias;
  int64_t num_layers;
  double dropout;
  bool train, bidirectional;
  bool proj = false;  // an LSTM with w_hr
  int64_t directions() const { return bidirectional ? 2 : 1; }
  // Tensors per layer and direction: w_ih, w_hh, [b_ih, b_hh], [w_hr].
  int64_t per_direction() const { return 2 + (bias ? 2 : 0) + (proj ? 1 : 0); }
  int64_t gates() const { return mode == RecurrentMode::LSTM ? 4 : mode == RecurrentMode::GRU ? 3 : 1; }
};

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
std::vector<Tensor> run_direction(const Layers& c, const Tensor* w, const Tensor& x, const Steps& steps, Tensor h0,
                                  Tensor c0, bool reverse) {
  const int64_t T = steps.T(), N = h0.size(0);
  Tensor b_ih = c.bias ? w[2] : Tensor(), b_hh = c.bias ? w[3] : Tensor();
  Tensor w_hr = c.proj ? w[c.bias ? 4 : 2] : Tensor();
  // The whole sequence's input projection in one matmul.
  Tensor xp = linear(x, w[0], b_ih);
  // An LSTM over a padded batch (every step all N rows), without projection: the fused time loop
  // (Note [Fused LSTM layer] in lstm.cpp).
  const bool padded = std::all_of(steps.bs.begin(), steps.bs.end(), [&](int64_t b) { return b == N; });
  if (c.mode == RecurrentMode::LSTM && !w_hr.defined() && padded && (x.dtype() == kFloat32 || x.dtype() == kFloat64))
    return lstm_layer(xp, h0, c0, w[1], b_hh, reverse);
  // Each step's rows, behind one autograd node (SplitSteps).
  std::vector<int64_t> rows(steps.bs.begin(), steps.bs.end());
  std::vector<Tensor> step_inputs = T == 1 ? std::vector<Tensor>{xp} : SplitSteps::apply(xp, rows);
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
    auto next = detail::recurrent_step(c.mode, step_inputs[static_cast<size_t>(t)], h, cs, w[1], b_hh, w_hr);
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

// Every layer over the packed rows x [rows, I] (sorted order); h0, c0 [L*D, N, *]. Returns the
// last layer's rows [rows, D*Hout] followed by the final states, [L*D, N, *] each.
std::vector<Tensor> run_layers(const Layers& c, const std::vector<Tensor>& weights, Tensor x, const Steps& steps,
                               const Tensor& h0, const Tensor& c0) {
  const bool lstm = c.mode == RecurrentMode::LSTM;
  const int64_t D = c.directions(), per = c.per_direction();
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
    if (c.train && c.dropout > 0 && layer + 1 < c.num_layers) x = cohort::dropout(x, c.dropout, true);
  }
  std::vector<Tensor> result{x, stack(hn, 0)};
  if (lstm) result.push_back(stack(cn, 0));
  return result;
}

// The checks every layer op shares: params in the layout of include/cohort/ops/rnn.h for an input
// of I features, states [L*D, N, *], one dtype. Sets c.proj.
void check_layers(Layers& c, int64_t I, int64_t N, const std::vector<Tensor>& hx, const std::vector<Tensor>& params,
                  DType dtype) {
  const bool lstm = c.mode == RecurrentMode::LSTM;
  COHORT_CHECK(c.num_layers > 0, c.op, ": num_layers must be greater than zero, got ", c.num_layers);
  COHORT_CHECK(c.dropout >= 0 && c.dropout <= 1, c.op, ": dropout should be in [0, 1], got ", c.dropout);
  for (const Tensor& h : hx)
    COHORT_CHECK(h.defined() && h.dim() == 3, c.op, ": expected 3-d hidden states [num_layers * directions, batch, ",
                 "size], got ", shape_of(h));
  c.proj = lstm && hx[0].size(2) != hx[1].size(2);
  const int64_t LD = c.num_layers * c.directions();
  COHORT_CHECK(static_cast<int64_t>(params.size()) == LD * c.per_direction(), c.op, ": expected ",
               LD * c.per_direction(), " parameters (", c.per_direction(), " per layer and direction), got ",
               params.size());
  for (const Tensor& p : params)
    COHORT_CHECK(p.defined() && (p.dim() == 1 || p.dim() == 2), c.op, ": expected 2-d weights and 1-d biases, got ",
                 shape_of(p));
  const Tensor &w_ih = params[0], &w_hh = params[1];
  COHORT_CHECK(w_hh.dim() == 2 && w_hh.size(0) % c.gates() == 0 && w_hh.size(0) > 0, c.op,
               ": expected w_hh of shape [", c.gates(), " * hidden_size, *], got ", shape_of(w_hh));
  const int64_t H = w_hh.size(0) / c.gates(), Hout = c.proj ? hx[0].size(2) : H;
  COHORT_CHECK(w_ih.dim() == 2 && w_ih.size(1) == I, c.op, ": expected w_ih with ", I,
               " columns (the input's features), got ", shape_of(w_ih));
  COHORT_CHECK(hx[0].sizes() == IntArrayRef({LD, N, Hout}), c.op, ": expected h0 of shape ", Shape{LD, N, Hout},
               ", got ", hx[0].sizes());
  if (lstm)
    COHORT_CHECK(hx[1].sizes() == IntArrayRef({LD, N, H}), c.op, ": expected c0 of shape ", Shape{LD, N, H}, ", got ",
                 hx[1].sizes());
  std::vector<const Tensor*> all;
  for (const Tensor& t : hx) all.push_back(&t);
  for (const Tensor& t : params) all.push_back(&t);
  for (const Tensor* t : all)
    COHORT_CHECK_AS(TypeError, t->dtype() == dtype, c.op, ": expected every tensor in ", dtype,
                    " (the input's dtype), got ", t->dtype());
}

// The padded ops' one body: input [T, N, I] ([N, T, I] when batch_first); returns {output, h_n (, c_n)}.
std::vector<Tensor> layers_padded(Layers c, const Tensor& input, std::vector<Tensor> hx,
                                  const std::vector<Tensor>& params, bool batch_first) {
  if (autocast::active() && input.defined()) {
    autocast::CastOpScope cast;
    const DType dtype = detail::recurrent_autocast_dtype(c.mode, input.dtype());
    return layers_padded(c, detail::recurrent_cast(input, dtype), detail::recurrent_cast(std::move(hx), dtype),
                         detail::recurrent_cast(params, dtype), batch_first);
  }
  COHORT_CHECK(input.defined() && input.dim() == 3, c.op, ": expected a 3-d input ",
               batch_first ? "[batch, steps, features]" : "[steps, batch, features]", ", got ", shape_of(input));
  Tensor x = batch_first ? input.transpose(0, 1) : input;
  COHORT_CHECK(x.size(0) > 0, c.op, ": expected a sequence of at least one step, got input of shape ", input.sizes());
  const int64_t T = x.size(0), N = x.size(1);
  check_layers(c, x.size(2), N, hx, params, input.dtype());
  auto r = run_layers(c, params, x.reshape({T * N, x.size(2)}), uniform_steps(T, N), hx[0],
                      c.mode == RecurrentMode::LSTM ? hx[1] : Tensor());
  r[0] = r[0].view({T, N, r[0].size(1)});
  if (batch_first) r[0] = r[0].transpose(0, 1);
  return r;
}

// The packed ops' one body: data [rows, I] with batch_sizes; returns {output rows, h_n (, c_n)}.
std::vector<Tensor> layers_packed(Layers c, const Tensor& data, const Tensor& batch_sizes, std::vector<Tensor> hx,
                                  const std::vector<Tensor>& params) {
  if (autocast::active() && data.defined()) {
    autocast::CastOpScope cast;
    const DType dtype = detail::recurrent_autocast_dtype(c.mode, data.dtype());
    return layers_packed(c, detail::recurrent_cast(data, dtype), batch_sizes,
                         detail::recurrent_cast(std::move(hx), dtype), detail::recurrent_cast(params, dtype));
  }
  COHORT_CHECK(data.defined() && data.dim() == 2, c.op, ": expected packed data of shape [rows, features], got ",
               shape_of(data));
  COHORT_CHECK(batch_sizes.defined() && batch_sizes.dim() == 1 && batch_sizes.dtype() == kInt64 &&
                   batch_sizes.numel() > 0,
               c.op, ": expected batch_sizes a non-empty 1-d int64 tensor, got ", shape_of(batch_sizes));
  Steps steps;
  const Tensor bs = batch_sizes.contiguous();
  steps.bs.assign(bs.data_ptr<int64_t>(), bs.data_ptr<int64_t>() + bs.numel());
  steps.offsets.push_back(0);
  for (size_t t = 0; t < steps.bs.size(); ++t) {
    COHORT_CHECK(steps.bs[t] > 0 && (t == 0 || steps.bs[t] <= steps.bs[t - 1]), c.op,
                 ": expected positive, non-increasing batch_sizes, got ", steps.bs[t], " at step ", t);
    steps.offsets.push_back(steps.offsets.back() + steps.bs[t]);
  }
  COHORT_CHECK(steps.offsets.back() == data.size(0), c.op, ": batch_sizes add up to ", steps.offsets.back(),
               " rows but the data has ", data.size(0));
  check_layers(c, data.size(1), steps.bs[0], hx, params, data.dtype());
  return run_layers(c, params, data, steps, hx[0], c.mode == RecurrentMode::LSTM ? hx[1] : Tensor());
}

Layers layers(const char* op, RecurrentMode mode, bool has_biases, int64_t num_layers, double dropout, bool train,
              bool bidirectional) {
  return Layers{op, mode, has_biases, num_layers, dropout, train, bidirectional};
}

std::tuple<Tensor, Tensor> two(const std::vector<Tensor>& r) { return {r[0], r[1]}; }
std::tuple<Tensor, Tensor, Tensor> three(const std::vector<Tensor>& r) { return {r[0], r[1], r[2]}; }

}  // namespace

std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input, const std::vector<Tensor>& hx,
                                        const std::vector<Tensor>& params, bool has_biases, int64_t num_layers,
                                        double dropout, bool train, bool bidirectional, bool batch_first) {
  COHORT_CHECK(hx.size() == 2, "lstm: expected hx = {h0, c0}, two tensors, got ", hx.size());
  Layers c = layers("lstm", RecurrentMode::LSTM, has_biases, num_layers, dropout, train, bidirectional);
  return three(layers_padded(c, input, hx, params, batch_first));
}
std::tuple<Tensor, Tensor> gru(const Tensor& input, const Tensor& hx, const std::vector<Tensor>& params,
                               bool has_biases, int64_t num_layers, double dropout, bool train, bool bidirectional,
                               bool batch_first) {
  Layers c = layers("gru", RecurrentMode::GRU, has_biases, num_layers, dropout, train, bidirectional);
  return two(layers_padded(c, input, {hx}, params, batch_first));
}
std::tuple<Tensor, Tensor> rnn_tanh(const Tensor& input, const Tensor& hx, const std::vector<Tensor>& params,
                                    bool has_biases, int64_t num_layers, double dropout, bool train,
                                    bool bidirectional, bool batch_first) {
  Layers c = layers("rnn_tanh", RecurrentMode::RNNTanh, has_biases, num_layers, dropout, train, bidirectional);
  return two(layers_padded(c, input, {hx}, params, batch_first));
}
std::tuple<Tensor, Tensor> rnn_relu(const Tensor& input, const Tensor& hx, const std::vector<Tensor>& params,
                                    bool has_biases, int64_t num_layers, double dropout, bool train,
                                    bool bidirectional, bool batch_first) {
  Layers c = layers("rnn_relu", RecurrentMode::RNNReLU, has_biases, num_layers, dropout, train, bidirectional);
  return two(layers_padded(c, input, {hx}, params, batch_first));
}

std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& data, const Tensor& batch_sizes, const std::vector<Tensor>& hx,
                                        const std::vector<Tensor>& params, bool has_biases, int64_t num_layers,
                                        double dropout, bool train, bool bidirectional) {
  COHORT_CHECK(hx.size() == 2, "lstm: expected hx = {h0, c0}, two tensors, got ", hx.size());
  Layers c = layers("lstm", RecurrentMode::LSTM, has_biases, num_layers, dropout, train, bidirectional);
  return three(layers_packed(c, data, batch_sizes, hx, params));
}
std::tuple<Tensor, Tensor> gru(const Tensor& data, const Tensor& batch_sizes, const Tensor& hx,
                               const std::vector<Tensor>& params, bool has_biases, int64_t num_layers, double dropout,
                               bool train, bool bidirectional) {
  Layers c = layers("gru", RecurrentMode::GRU, has_biases, num_layers, dropout, train, bidirectional);
  return two(layers_packed(c, data, batch_sizes, {hx}, params));
}
std::tuple<Tensor, Tensor> rnn_tanh(const Tensor& data, const Tensor& batch_sizes, const Tensor& hx,
                                    const std::vector<Tensor>& params, bool has_biases, int64_t num_layers,
                                    double dropout, bool train, bool bidirectional) {
  Layers c = layers("rnn_tanh", RecurrentMode::RNNTanh, has_biases, num_layers, dropout, train, bidirectional);
  return two(layers_packed(c, data, batch_sizes, {hx}, params));
}
std::tuple<Tensor, Tensor> rnn_relu(const Tensor& data, const Tensor& batch_sizes, const Tensor& hx,
                                    const std::vector<Tensor>& params, bool has_biases, int64_t num_layers,
                                    double dropout, bool train, bool bidirectional) {
  Layers c = layers("rnn_relu", RecurrentMode::RNNReLU, has_biases, num_layers, dropout, train, bidirectional);
  return two(layers_packed(c, data, batch_sizes, {hx}, params));
}

}  // namespace cohort
