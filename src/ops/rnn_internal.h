// What the recurrent ops share (src/ops/rnn_cell.cpp, src/ops/rnn.cpp): the step of each kind of
// cell and the autocast policy.
#pragma once

#include <vector>

#include "cohort/core/tensor.h"

namespace cohort::detail {

enum class RecurrentMode { RNNTanh, RNNReLU, LSTM, GRU };

// One step. xp: this step's input projection with b_ih, [N, G]; h: [N, Hout]; c: [N, hidden] (LSTM).
// w_hh, b_hh, w_hr (b_hh, w_hr possibly undefined). Returns h' (and c' for an LSTM).
std::vector<Tensor> recurrent_step(RecurrentMode mode, const Tensor& xp, const Tensor& h, const Tensor& c,
                                   const Tensor& w_hh, const Tensor& b_hh, const Tensor& w_hr);

// The dtype a recurrent op computes in under autocast (include/cohort/ops/rnn.h), and a tensor or
// list cast to it (undefined, integer and float64 tensors unchanged).
DType recurrent_autocast_dtype(RecurrentMode mode, DType input);
Tensor recurrent_cast(const Tensor& t, DType dtype);
std::vector<Tensor> recurrent_cast(std::vector<Tensor> tensors, DType dtype);

}  // namespace cohort::detail
