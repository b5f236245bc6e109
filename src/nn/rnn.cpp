// Recurrent layers and cells: parameters in PyTorch's layout, checks of the call, and the recurrent
// ops of include/cohort/ops/rnn.h.
#include "cohort/nn/rnn.h"

#include <cmath>
#include <ostream>

#include "cohort/autograd/trace.h"
#include "cohort/nn/init.h"
#include "cohort/ops/autocast.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/linalg.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/rnn.h"
#include "cohort/ops/shape.h"

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
  // Under autocast the op casts the input, states and parameters to one dtype (include/cohort/ops/rnn.h).
  COHORT_CHECK(autocast::is_cpu_enabled() || given.dtype() == x.dtype(), name_of(c), ": ", what, " has dtype ",
               given.dtype(), " but the input has ", x.dtype());
  return batched ? given : given.unsqueeze(1);
}

void check_input(const RNNConfig& c, const Tensor& input, int64_t batched_dim, const std::vector<Tensor>& w) {
  COHORT_CHECK(input.defined(), name_of(c), ": the input is undefined");
  COHORT_CHECK(input.dim() == batched_dim || input.dim() == batched_dim - 1, name_of(c), ": expected a ",
               batched_dim - 1, "-d (unbatched) or ", batched_dim, "-d (batched) input, got a ", input.dim(),
               "-d input of shape ", input.sizes());
  COHORT_CHECK(input.size(-1) == c.input_size, name_of(c), ": expected input_size=", c.input_size,
               " features in the input's last dim, got input of shape ", input.sizes());
  // Under autocast the op casts the input, states and parameters to one dtype (include/cohort/ops/rnn.h).
  if (autocast::is_cpu_enabled()) return;
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

// The layer op of c's kind: x [T, N, I] (or data with batch_sizes), states [L*D, N, *]. Returns
// the output and the final states.
std::pair<Tensor, std::vector<Tensor>> run_op(const RNNConfig& c, const std::vector<Tensor>& w, bool training,
                                              const Tensor& x, const Tensor& batch_sizes, const Tensor& h0,
                                              const Tensor& c0) {
  const bool packed = batch_sizes.defined(), D2 = c.bidirectional;
  auto two = [](std::tuple<Tensor, Tensor> r) {
    return std::pair<Tensor, std::vector<Tensor>>{std::get<0>(r), {std::get<1>(r)}};
  };
  switch (c.mode) {
    case RNNMode::LSTM: {
      auto r = packed ? cohort::lstm(x, batch_sizes, {h0, c0}, w, c.bias, c.num_layers, c.dropout, training, D2)
                      : cohort::lstm(x, {h0, c0}, w, c.bias, c.num_layers, c.dropout, training, D2, false);
      return {std::get<0>(r), {std::get<1>(r), std::get<2>(r)}};
    }
    case RNNMode::GRU:
      return two(packed ? cohort::gru(x, batch_sizes, h0, w, c.bias, c.num_layers, c.dropout, training, D2)
                        : cohort::gru(x, h0, w, c.bias, c.num_layers, c.dropout, training, D2, false));
    case RNNMode::RNNReLU:
      return two(packed ? cohort::rnn_relu(x, batch_sizes, h0, w, c.bias, c.num_layers, c.dropout, training, D2)
                        : cohort::rnn_relu(x, h0, w, c.bias, c.num_layers, c.dropout, training, D2, false));
    case RNNMode::RNNTanh: break;
  }
  return two(packed ? cohort::rnn_tanh(x, batch_sizes, h0, w, c.bias, c.num_layers, c.dropout, training, D2)
                    : cohort::rnn_tanh(x, h0, w, c.bias, c.num_layers, c.dropout, training, D2, false));
}

}  // namespace

std::pair<Tensor, std::vector<Tensor>> rnn_forward(const RNNConfig& c, const std::vector<Tensor>& weights,
                                                   bool training, const Tensor& input, std::vector<Tensor> hx) {
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
  const int64_t N = x.size(1);
  hx.resize(lstm ? 2 : 1);
  Tensor h0 = initial_state(c, hx[0], lstm ? "h0 (hx[0])" : "h0 (hx)", x, N, batched, out_size_of(c));
  Tensor c0 = lstm ? initial_state(c, hx[1], "c0 (hx[1])", x, N, batched, c.hidden_size) : Tensor();
  auto [out, states] = run_op(c, weights, training, x, Tensor(), h0, c0);
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
  const Tensor& data = input.data();
  COHORT_CHECK(input.defined() && data.dim() == 2, name_of(c), ": a PackedSequence's data should be 2-d [steps, ",
               "input_size], got ", data.defined() ? data.sizes().vec() : Shape{});
  check_input(c, data, 2, weights);
  const bool lstm = c.mode == RNNMode::LSTM;
  const Tensor bs = input.batch_sizes().contiguous();
  COHORT_CHECK(bs.defined() && bs.numel() > 0, name_of(c), ": the PackedSequence has no steps");
  const int64_t N = bs.data_ptr<int64_t>()[0];
  const int64_t rows = bs.sum().item<int64_t>();
  COHORT_CHECK(rows == data.size(0), name_of(c), ": the PackedSequence's batch_sizes add up to ", rows,
               " steps but its data has ", data.size(0), " rows");
  hx.resize(lstm ? 2 : 1);
  // Initial states come in the batch's original order; the loop runs in sorted order.
  const Tensor& sorted = input.sorted_indices();
  auto in_sorted_order = [&](const Tensor& t) { return t.defined() && sorted.defined() ? t.index_select(1, sorted) : t; };
  Tensor h0 = in_sorted_order(initial_state(c, hx[0], lstm ? "h0 (hx[0])" : "h0 (hx)", data, N, true, out_size_of(c)));
  Tensor c0 = lstm ? in_sorted_order(initial_state(c, hx[1], "c0 (hx[1])", data, N, true, c.hidden_size)) : Tensor();
  auto [out, states] = run_op(c, weights, training, data, input.batch_sizes(), h0, c0);
  const Tensor& unsorted = input.unsorted_indices();
  if (unsorted.defined())
    for (Tensor& s : states) s = s.index_select(1, unsorted);
  return {utils::rnn::PackedSequence(out, input.batch_sizes(), input.sorted_indices(), input.unsorted_indices()),
          states};
}

std::vector<Tensor> rnn_cell_forward(const RNNConfig& c, const std::vector<Tensor>& w, const Tensor& input,
                                     std::vector<Tensor> hx) {
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
  std::vector<Tensor> out;
  switch (c.mode) {
    case RNNMode::LSTM: {
      auto [h, cs] = cohort::lstm_cell(x, {hx[0], hx[1]}, w[0], w[1], b_ih, b_hh);
      out = {h, cs};
      break;
    }
    case RNNMode::GRU: out = {cohort::gru_cell(x, hx[0], w[0], w[1], b_ih, b_hh)}; break;
    case RNNMode::RNNReLU: out = {cohort::rnn_relu_cell(x, hx[0], w[0], w[1], b_ih, b_hh)}; break;
    case RNNMode::RNNTanh: out = {cohort::rnn_tanh_cell(x, hx[0], w[0], w[1], b_ih, b_hh)}; break;
  }
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
