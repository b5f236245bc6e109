// Recurrent ops, spelled as ATen's: the cells (one step), the whole layers over a padded batch or a
// packed one (data and batch_sizes, PackedSequence's two tensors), and the LSTM's fused time loop
// for one layer and one direction. nn::RNN, nn::LSTM, nn::GRU and the cells hold the parameters and
// call these.
//
// params: per layer and direction (forward, then reverse, then the next layer) w_ih [G*H, I],
// w_hh [G*H, Hout], then b_ih [G*H], b_hh [G*H] when has_biases, then for an LSTM with a projection
// w_hr [P, H]; G is 4 (LSTM: gates i, f, g, o), 3 (GRU: r, z, n) or 1. An LSTM has a projection
// when h0's last dim (P) is smaller than c0's (H); Hout is P then, H otherwise.
// Under autocast: RNN (tanh, relu) computes in the autocast dtype, LSTM and GRU in their input's
// dtype with the parameters and states cast to it; float64 is never cast (PyTorch 1.13's policy).
#pragma once

#include <tuple>
#include <vector>

#include "cohort/core/tensor.h"

namespace cohort {

// ---- cells: input [N, I], states [N, H] -------------------------------------------------------
// hx = {h, c}. Returns {h', c'}.
std::tuple<Tensor, Tensor> lstm_cell(const Tensor& input, const std::vector<Tensor>& hx, const Tensor& w_ih,
                                     const Tensor& w_hh, const Tensor& b_ih = {}, const Tensor& b_hh = {});
// r, z, n = gates; h' = (1 - z) n + z h with n = tanh(x_n + r (h w_hn^T + b_hn)).
Tensor gru_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                const Tensor& b_ih = {}, const Tensor& b_hh = {});
// h' = tanh(x w_ih^T + b_ih + h w_hh^T + b_hh); relu for rnn_relu_cell.
Tensor rnn_tanh_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = {}, const Tensor& b_hh = {});
Tensor rnn_relu_cell(const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
                     const Tensor& b_ih = {}, const Tensor& b_hh = {});

// ---- layers over a padded batch: input [T, N, I] ([N, T, I] when batch_first); states
// [num_layers * directions, N, *]. Returns {output [T, N, directions * Hout] (batch_first: [N, T, *]),
// h_n (, c_n)}. Dropout with probability `dropout` on the outputs of every layer but the last when
// `train`.
std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& input, const std::vector<Tensor>& hx,
                                        const std::vector<Tensor>& params, bool has_biases, int64_t num_layers,
                                        double dropout, bool train, bool bidirectional, bool batch_first);
std::tuple<Tensor, Tensor> gru(const Tensor& input, const Tensor& hx, const std::vector<Tensor>& params,
                               bool has_biases, int64_t num_layers, double dropout, bool train, bool bidirectional,
                               bool batch_first);
std::tuple<Tensor, Tensor> rnn_tanh(const Tensor& input, const Tensor& hx, const std::vector<Tensor>& params,
                                    bool has_biases, int64_t num_layers, double dropout, bool train,
                                    bool bidirectional, bool batch_first);
std::tuple<Tensor, Tensor> rnn_relu(const Tensor& input, const Tensor& hx, const std::vector<Tensor>& params,
                                    bool has_biases, int64_t num_layers, double dropout, bool train,
                                    bool bidirectional, bool batch_first);

// ---- layers over a packed batch: data [rows, I], batch_sizes int64 [T] non-increasing (step t
// runs the first batch_sizes[t] sequences, its rows following step t-1's), states in the batch's
// sorted order [num_layers * directions, batch_sizes[0], *]. Returns {output rows [rows, directions
// * Hout] in data's layout, h_n (, c_n)} (Note [Packed time loop] in src/ops/rnn.cpp).
std::tuple<Tensor, Tensor, Tensor> lstm(const Tensor& data, const Tensor& batch_sizes, const std::vector<Tensor>& hx,
                                        const std::vector<Tensor>& params, bool has_biases, int64_t num_layers,
                                        double dropout, bool train, bool bidirectional);
std::tuple<Tensor, Tensor> gru(const Tensor& data, const Tensor& batch_sizes, const Tensor& hx,
                               const std::vector<Tensor>& params, bool has_biases, int64_t num_layers, double dropout,
                               bool train, bool bidirectional);
std::tuple<Tensor, Tensor> rnn_tanh(const Tensor& data, const Tensor& batch_sizes, const Tensor& hx,
                                    const std::vector<Tensor>& params, bool has_biases, int64_t num_layers,
                                    double dropout, bool train, bool bidirectional);
std::tuple<Tensor, Tensor> rnn_relu(const Tensor& data, const Tensor& batch_sizes, const Tensor& hx,
                                    const std::vector<Tensor>& params, bool has_biases, int64_t num_layers,
                                    double dropout, bool train, bool bidirectional);

// ---- the LSTM's fused time loop for one layer and one direction (what lstm runs for a padded
// batch without a projection, float32 and float64) ---------------------------------------------
// xp [T * N, 4H]: every step's input projection (x w_ih^T + b_ih), step t's rows at t * N; h0, c0
// [N, H]; w_hh [4H, H]; b_hh [4H] or undefined. Gates in PyTorch's order i, f, g, o. Steps run
// t = 0 .. T-1, or T-1 .. 0 when `reverse`. Returns {out [T * N, H] (step t's h at rows t * N),
// h_n [N, H], c_n [N, H]}. float32 and float64. Differentiable to any order: the backward is fused
// kernels and one matmul per step, plus one matmul for w_hh's gradient over all steps; under
// create_graph it is composed of ops instead.
std::vector<Tensor> lstm_layer(const Tensor& xp, const Tensor& h0, const Tensor& c0, const Tensor& w_hh,
                               const Tensor& b_hh, bool reverse);

}  // namespace cohort
