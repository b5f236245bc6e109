// One step of the char-lstm with its state carried from the batch before (Note [Carried state] in
// trainer.cpp), shared by training and evaluation.
#pragma once

#include <functional>
#include <tuple>
#include <vector>

#include "cohort/models/char_lstm.h"
#include "cohort/ops/creation.h"

namespace cohort::app {

// (x, h, c) -> (logits, h_n, c_n): the model, or a wrapper of it, called with a state.
using CarryingForward = std::function<std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&)>;

// The logits of x from `state` ({h, c} [rows, layers, hidden]; zeros when empty or with fewer rows
// than x), which then becomes the final state, detached. A batch with fewer rows (the last of a
// --limit'ed set) takes the first streams' rows.
inline Tensor forward_carrying(std::vector<Tensor>& state, const Tensor& x, const CarryingForward& forward) {
  const int64_t rows = x.size(0);
  if (state.empty() || state[0].size(0) < rows) {
    const Shape shape{rows, models::CharLSTM::kLayers, models::CharLSTM::kHidden};
    state = {zeros(shape, kFloat32), zeros(shape, kFloat32)};
  }
  auto [logits, h, c] = forward(x, state[0].narrow(0, 0, rows), state[1].narrow(0, 0, rows));
  state = {h.detach(), c.detach()};
  return logits;
}

}  // namespace cohort::app
