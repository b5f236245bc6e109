// The recurrent cells (lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell): one step composed of
// ops, the step the layers in rnn.cpp run too, and the recurrent ops' autocast policy.
#include "cohort/ops/rnn.h"

#include <string>

#include "cohort/core/error.h"
#include "cohort/ops/linalg.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/shape.h"
#include "ops/autocast_casts.h"
#include "ops/rnn_internal.h"

namespace cohort {
namespace detail {

std::vector<Tensor> recurrent_step(RecurrentMode mode, const Tensor& xp, const Tensor& h, const Tensor& c,
                                   const Tensor& w_hh, const Tensor& b_hh, const Tensor& w_hr) {
  Tensor hp = b_hh.defined() ? addmm(b_hh, h, w_hh.t()) : mm(h, w_hh.t());
  switch (mode) {
    case RecurrentMode::RNNTanh: return {tanh(xp + hp)};
    case RecurrentMode::RNNReLU: return {relu(xp + hp)};
    case RecurrentMode::LSTM: {
      auto g = chunk(xp + hp, 4, 1);  // i, f, g, o
      Tensor c2 = sigmoid(g[1]) * c + sigmoid(g[0]) * tanh(g[2]);
      Tensor h2 = sigmoid(g[3]) * tanh(c2);
      if (w_hr.defined()) h2 = mm(h2, w_hr.t());
      return {h2, c2};
    }
    case RecurrentMode::GRU: {
      auto x = chunk(xp, 3, 1), y = chunk(hp, 3, 1);  // r, z, n
      Tensor r = sigmoid(x[0] + y[0]), z = sigmoid(x[1] + y[1]);
      Tensor n = tanh(x[2] + r * y[2]);
      return {n + z * (h - n)};
    }
  }
  return {};
}

// PyTorch 1.13's: RNN (tanh, relu) in the autocast dtype, as its steps are linear layers there; LSTM
// and GRU in their input's dtype (float32 stays float32). float64 is never cast.
DType recurrent_autocast_dtype(RecurrentMode mode, DType input) {
  const bool plain = mode == RecurrentMode::RNNTanh || mode == RecurrentMode::RNNReLU;
  return plain && input != kFloat64 ? autocast::get_autocast_cpu_dtype() : input;
}

Tensor recurrent_cast(const Tensor& t, DType dtype) {
  if (!t.defined() || !t.is_floating_point() || t.dtype() == dtype || t.dtype() == kFloat64) return t;
  return dtype == autocast::get_autocast_cpu_dtype() ? autocast::to_lower(t) : t.to(dtype);
}

std::vector<Tensor> recurrent_cast(std::vector<Tensor> tensors, DType dtype) {
  for (Tensor& t : tensors) t = recurrent_cast(t, dtype);
  return tensors;
}

}  // namespace detail

namespace {

using detail::RecurrentMode;

Shape shape_of(const Tensor& t) { return t.defined() ? t.sizes().vec() : Shape{}; }

// A cell's checks: input [N, I], each state [N, H] (H from w_hh), weights [G*H, I] and [G*H, H],
// biases [G*H], one dtype.
void check_cell(const char* op, int64_t gates, const Tensor& input, const std::vector<Tensor>& hx, const Tensor& w_ih,
                const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  COHORT_CHECK(w_ih.defined() && w_ih.dim() == 2 && w_hh.defined() && w_hh.dim() == 2 && w_hh.size(0) % gates == 0 &&
                   w_ih.size(0) == w_hh.size(0) && w_hh.size(0) == gates * w_hh.size(1),
               op, ": expected w_ih [", gates, " * hidden_size, input_size] and w_hh [", gates,
               " * hidden_size, hidden_size], got ", shape_of(w_ih), " and ", shape_of(w_hh));
  const int64_t H = w_hh.size(1), I = w_ih.size(1);
  COHORT_CHECK(input.defined() && input.dim() == 2 && input.size(1) == I, op, ": expected input of shape [batch, ", I,
               "], got ", shape_of(input));
  const int64_t N = input.size(0);
  for (const Tensor& h : hx)
    COHORT_CHECK(h.defined() && h.sizes() == IntArrayRef({N, H}), op, ": expected each hidden state of shape [", N,
                 ", ", H, "] (batch, hidden_size), got ", shape_of(h));
  for (const Tensor* b : {&b_ih, &b_hh})
    COHORT_CHECK(!b->defined() || b->sizes() == IntArrayRef({gates * H}), op, ": expected biases of shape [",
                 gates * H, "] or none, got ", shape_of(*b));
  std::vector<const Tensor*> all{&w_ih, &w_hh, &b_ih, &b_hh};
  for (const Tensor& h : hx) all.push_back(&h);
  for (const Tensor* t : all)
    COHORT_CHECK_AS(TypeError, !t->defined() || t->dtype() == input.dtype(), op, ": expected every tensor in ",
                    input.dtype(), " (the input's dtype), got ", t->dtype());
}

// The cells' one body: hx has h (and c for an LSTM).
std::vector<Tensor> cell(const char* op, RecurrentMode mode, const Tensor& input, std::vector<Tensor> hx,
                         const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  if (autocast::active() && input.defined()) {
    autocast::CastOpScope cast;
    const DType dtype = detail::recurrent_autocast_dtype(mode, input.dtype());
    auto w = detail::recurrent_cast({w_ih, w_hh, b_ih, b_hh}, dtype);
    return cell(op, mode, detail::recurrent_cast(input, dtype), detail::recurrent_cast(std::move(hx), dtype), w[0],
                w[1], w[2], w[3]);
  }
  const int64_t gates = mode == RecurrentMode::LSTM ? 4 : mode == RecurrentMode::GRU ? 3 : 1;
  check_cell(op, gates, input, hx, w_ih, w_hh, b_ih, b_hh);
  return detail::recurrent_step(mode, linear(input, w_ih, b_ih), hx[0], mode == RecurrentMode::LSTM ? hx[1] : Tensor(),
                                w_hh, b_hh, Tensor());
}

}  // namespace

std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const std::vector<Tensor>& hx, const Tensor& w_ih,
                                     const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh) {
  COHORT_CHECK(hx.size() == 2, "lstm_cell: expected hx = {h, c}, two tensors, got ", hx.size());
  auto out = cell("lstm_cell", RecurrentMode::LSTM, input, hx, w_ih, w_hh, b_ih, b_hh);
  return {out[0], out[1]};
}

Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh, const Tensor& b_ih,
                const Tensor& b_hh) {
  return cell("gru_cell", RecurrentMode::GRU, input, {hx}, w_ih, w_hh, b_ih, b_hh)[0];
}

Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  return cell("rnn_tanh_cell", RecurrentMode::RNNTanh, input, {hx}, w_ih, w_hh, b_ih, b_hh)[0];
}

Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih, const Tensor& b_hh) {
  return cell("rnn_relu_cell", RecurrentMode::RNNReLU, input, {hx}, w_ih, w_hh, b_ih, b_hh)[0];
}

}  // namespace cohort
