// The recurrent ops and in_projection_packed outside the op table: their errors name the op, what
// was expected and what was given; the padded and packed forms agree where both apply; and the
// modules' output is the ops' output.
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include "support/error_of.h"

#include "cohort/nn/rnn.h"
#include "cohort/ops/attention.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/rnn.h"

using namespace cohort;
using cohort::testing::error_of;
using ::testing::HasSubstr;

namespace {

double max_diff(const Tensor& a, const Tensor& b) { return (a - b).abs().max().item<double>(); }

std::vector<Tensor> lstm_params(int64_t I, int64_t H) {
  return {randn({4 * H, I}), randn({4 * H, H}), randn({4 * H}), randn({4 * H})};
}

TEST(RnnOps, ErrorsNameTheOp) {
  const std::vector<Tensor> p = lstm_params(3, 2);
  const Tensor x = randn({4, 2, 3}), h = zeros({1, 2, 2});
  EXPECT_THAT(error_of([&] { lstm(x, {h}, p, true, 1, 0.0, false, false, false); }),
              HasSubstr("lstm: expected hx = {h0, c0}, two tensors, got 1"));
  EXPECT_THAT(error_of([&] { lstm(x, {h, h}, p, true, 2, 0.0, false, false, false); }),
              HasSubstr("lstm: expected 8 parameters (4 per layer and direction), got 4"));
  EXPECT_THAT(error_of([&] { lstm(randn({4, 3}), {h, h}, p, true, 1, 0.0, false, false, false); }),
              HasSubstr("lstm: expected a 3-d input [steps, batch, features], got [4, 3]"));
  EXPECT_THAT(error_of([&] { lstm(x, {zeros({1, 3, 2}), h}, p, true, 1, 0.0, false, false, false); }),
              HasSubstr("lstm: expected h0 of shape [1, 2, 2], got [1, 3, 2]"));
  EXPECT_THAT(error_of([&] { gru(randn({4, 2, 5}), h, {randn({6, 3}), randn({6, 2})}, false, 1, 0.0, false, false,
                                 false); }),
              HasSubstr("gru: expected w_ih with 5 columns (the input's features), got [6, 3]"));
  EXPECT_THAT(error_of([&] { rnn_tanh(x.to(kFloat64), h, {randn({2, 3}), randn({2, 2})}, false, 1, 0.0, false, false,
                                      false); }),
              HasSubstr("rnn_tanh: expected every tensor in float64"));
  const Tensor data = randn({6, 3});
  EXPECT_THAT(error_of([&] { lstm(data, tensor(std::vector<int64_t>{2, 3, 1}), {h, h}, p, true, 1, 0.0, false,
                                  false); }),
              HasSubstr("lstm: expected positive, non-increasing batch_sizes, got 3 at step 1"));
  EXPECT_THAT(error_of([&] { rnn_relu(data, tensor(std::vector<int64_t>{2, 2}), h, {randn({2, 3}), randn({2, 2})},
                                      false, 1, 0.0, false, false); }),
              HasSubstr("rnn_relu: batch_sizes add up to 4 rows but the data has 6"));
  EXPECT_THAT(error_of([&] { lstm_cell(randn({2, 3}), {zeros({2, 2})}, p[0], p[1]); }),
              HasSubstr("lstm_cell: expected hx = {h, c}, two tensors, got 1"));
  EXPECT_THAT(error_of([&] { gru_cell(randn({2, 3}), zeros({2, 2}), randn({6, 3}), randn({6, 3})); }),
              HasSubstr("gru_cell: expected w_ih [3 * hidden_size, input_size] and w_hh [3 * hidden_size, "
                        "hidden_size], got [6, 3] and [6, 3]"));
  EXPECT_THAT(error_of([&] { rnn_relu_cell(randn({2, 3}), zeros({3, 2}), randn({2, 3}), randn({2, 2})); }),
              HasSubstr("rnn_relu_cell: expected each hidden state of shape [2, 2] (batch, hidden_size), got [3, 2]"));
  EXPECT_THAT(error_of([&] { in_projection_packed(randn({2, 3}), randn({2, 3}), randn({2, 3}), randn({8, 3})); }),
              HasSubstr("in_projection_packed: expected a weight of shape [3 * E, E_in], got [8, 3]"));
  EXPECT_THAT(error_of([&] { in_projection_packed(randn({2, 3}), randn({2, 4}), randn({2, 3}), randn({9, 3})); }),
              HasSubstr("in_projection_packed: expected q, k and v of shape [rows, 3], got [2, 3], [2, 4] and [2, 3]"));
  EXPECT_THAT(error_of([&] { in_projection_packed(randn({2, 3}), randn({2, 3}), randn({2, 3}), randn({9, 3}),
                                                  randn({8})); }),
              HasSubstr("in_projection_packed: expected a bias of shape [9] or none, got [8]"));
}

// A packed batch whose sequences all have every step is the padded batch's rows.
TEST(RnnOps, PackedOfFullLengthIsPadded) {
  const std::vector<Tensor> p = {randn({6, 3}), randn({6, 2}), randn({6}), randn({6}),
                                 randn({6, 3}), randn({6, 2}), randn({6}), randn({6})};
  const Tensor x = randn({4, 2, 3}), h = randn({2, 2, 2});
  auto [out, hn] = gru(x, h, p, true, 1, 0.0, false, true, false);
  auto [rows, hn2] = gru(x.reshape({8, 3}), tensor(std::vector<int64_t>{2, 2, 2, 2}), h, p, true, 1, 0.0, false, true);
  EXPECT_LT(max_diff(out.reshape({8, 4}), rows), 1e-6);
  EXPECT_LT(max_diff(hn, hn2), 1e-6);
}

// The module is its parameters and the op.
TEST(RnnOps, ModuleForwardIsTheOp) {
  nn::LSTM lstm(nn::LSTMOptions(3, 2).num_layers(2).batch_first(true));
  const Tensor x = randn({2, 5, 3}), h = randn({2, 2, 2}), c = randn({2, 2, 2});
  auto [out, states] = lstm->forward(x, std::make_tuple(h, c));
  auto [o, hn, cn] = cohort::lstm(x, {h, c}, lstm->all_weights(), true, 2, 0.0, false, false, true);
  EXPECT_EQ(max_diff(out, o), 0);
  EXPECT_EQ(max_diff(std::get<0>(states), hn), 0);
  EXPECT_EQ(max_diff(std::get<1>(states), cn), 0);
}

}  // namespace
