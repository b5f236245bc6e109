// The libtorch-port promise for the recurrent ops a program may call without a module, as ATen's:
// torch::lstm, torch::gru, torch::rnn_tanh, torch::rnn_relu over a padded batch and over a packed
// one (data, batch_sizes), and torch::lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell, with their
// values against the modules' forward on the same weights (compat.h has the rules).
#include "compat.h"

using namespace compat;

namespace {

torch::Tensor values(std::vector<int64_t> sizes, double step) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return torch::arange(n, torch::kFloat32).mul(step).cos().view(sizes);
}

// Two bidirectional layers, batch_first, against the module.
void padded_layers() {
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).batch_first(true));
  fill_weights(*lstm);
  auto x = values({2, 5, 3}, 0.71), h0 = values({4, 2, 4}, 0.3), c0 = values({4, 2, 4}, 0.5);
  auto want = lstm->forward(x, std::make_tuple(h0, c0));
  auto got = torch::lstm(x, {h0, c0}, lstm->all_weights(), true, 2, 0.0, false, true, true);
  check(close(std::get<0>(got), std::get<0>(want), 1e-5), "torch::lstm output as LSTM's");
  check(close(std::get<1>(got), std::get<0>(std::get<1>(want)), 1e-5) &&
            close(std::get<2>(got), std::get<1>(std::get<1>(want)), 1e-5),
        "torch::lstm h_n, c_n as LSTM's");

  torch::nn::GRU gru(torch::nn::GRUOptions(3, 4).num_layers(2).bidirectional(true));
  fill_weights(*gru);
  auto xt = values({5, 2, 3}, 0.43);
  auto gw = gru->forward(xt, h0);
  auto gg = torch::gru(xt, h0, gru->all_weights(), true, 2, 0.0, false, true, false);
  check(close(std::get<0>(gg), std::get<0>(gw), 1e-5) && close(std::get<1>(gg), std::get<1>(gw), 1e-5),
        "torch::gru as GRU's");

  torch::nn::RNN tanh_rnn(torch::nn::RNNOptions(3, 4).bias(false));
  fill_weights(*tanh_rnn);
  auto h1 = values({1, 2, 4}, 0.2);
  auto tw = tanh_rnn->forward(xt, h1);
  auto tg = torch::rnn_tanh(xt, h1, tanh_rnn->all_weights(), false, 1, 0.0, false, false, false);
  check(close(std::get<0>(tg), std::get<0>(tw), 1e-5) && close(std::get<1>(tg), std::get<1>(tw), 1e-5),
        "torch::rnn_tanh as RNN's");

  torch::nn::RNN relu_rnn(torch::nn::RNNOptions(3, 4).nonlinearity(torch::kReLU));
  fill_weights(*relu_rnn);
  auto rw = relu_rnn->forward(xt, h1);
  auto rg = torch::rnn_relu(xt, h1, relu_rnn->all_weights(), true, 1, 0.0, false, false, false);
  check(close(std::get<0>(rg), std::get<0>(rw), 1e-5) && close(std::get<1>(rg), std::get<1>(rw), 1e-5),
        "torch::rnn_relu as RNN(relu)'s");
}

// A packed batch of lengths 4, 3, 1 (sorted), against forward_with_packed_input.
void packed_layers() {
  auto padded = values({4, 3, 3}, 0.53);
  auto lengths = torch::tensor(std::vector<int64_t>{4, 3, 1});
  auto packed = torch::nn::utils::rnn::pack_padded_sequence(padded, lengths);
  check(packed.batch_sizes().equal(torch::tensor(std::vector<int64_t>{3, 2, 2, 1})), "batch_sizes 3, 2, 2, 1");
  auto h0 = values({2, 3, 4}, 0.3), c0 = values({2, 3, 4}, 0.5);

  torch::nn::LSTM lstm(torch::nn::LSTMOptions(3, 4).bidirectional(true));
  fill_weights(*lstm);
  auto want = lstm->forward_with_packed_input(packed, std::make_tuple(h0, c0));
  auto got = torch::lstm(packed.data(), packed.batch_sizes(), {h0, c0}, lstm->all_weights(), true, 1, 0.0, false,
                         true);
  check(close(std::get<0>(got), std::get<0>(want).data(), 1e-5), "packed torch::lstm rows as LSTM's");
  check(close(std::get<1>(got), std::get<0>(std::get<1>(want)), 1e-5) &&
            close(std::get<2>(got), std::get<1>(std::get<1>(want)), 1e-5),
        "packed torch::lstm h_n, c_n as LSTM's");

  torch::nn::GRU gru(torch::nn::GRUOptions(3, 4).bidirectional(true));
  fill_weights(*gru);
  auto gw = gru->forward_with_packed_input(packed, h0);
  auto gg = torch::gru(packed.data(), packed.batch_sizes(), h0, gru->all_weights(), true, 1, 0.0, false, true);
  check(close(std::get<0>(gg), std::get<0>(gw).data(), 1e-5) && close(std::get<1>(gg), std::get<1>(gw), 1e-5),
        "packed torch::gru as GRU's");

  torch::nn::RNN rnn(torch::nn::RNNOptions(3, 4).nonlinearity(torch::kReLU));
  fill_weights(*rnn);
  auto h1 = values({1, 3, 4}, 0.2);
  auto rw = rnn->forward_with_packed_input(packed, h1);
  auto rg = torch::rnn_relu(packed.data(), packed.batch_sizes(), h1, rnn->all_weights(), true, 1, 0.0, false, false);
  check(close(std::get<0>(rg), std::get<0>(rw).data(), 1e-5) && close(std::get<1>(rg), std::get<1>(rw), 1e-5),
        "packed torch::rnn_relu as RNN(relu)'s");
  auto tg = torch::rnn_tanh(packed.data(), packed.batch_sizes(), h1, rnn->all_weights(), true, 1, 0.0, false, false);
  check(has_sizes(std::get<0>(tg), {8, 4}) && has_sizes(std::get<1>(tg), {1, 3, 4}), "packed torch::rnn_tanh shapes");
}

// Each cell op against its module on the same weights.
void cells() {
  auto x = values({2, 3}, 0.71), h = values({2, 4}, 0.3), c = values({2, 4}, 0.5);
  torch::nn::LSTMCell lstm(3, 4);
  fill_weights(*lstm);
  auto want = lstm->forward(x, std::make_tuple(h, c));
  auto got = torch::lstm_cell(x, {h, c}, lstm->weight_ih, lstm->weight_hh, lstm->bias_ih, lstm->bias_hh);
  check(close(std::get<0>(got), std::get<0>(want), 1e-5) && close(std::get<1>(got), std::get<1>(want), 1e-5),
        "torch::lstm_cell as LSTMCell's");

  torch::nn::GRUCell gru(3, 4);
  fill_weights(*gru);
  check(close(torch::gru_cell(x, h, gru->weight_ih, gru->weight_hh, gru->bias_ih, gru->bias_hh), gru->forward(x, h),
              1e-5),
        "torch::gru_cell as GRUCell's");

  torch::nn::RNNCell tanh_cell(torch::nn::RNNCellOptions(3, 4).bias(false));
  fill_weights(*tanh_cell);
  check(close(torch::rnn_tanh_cell(x, h, tanh_cell->weight_ih, tanh_cell->weight_hh), tanh_cell->forward(x, h), 1e-5),
        "torch::rnn_tanh_cell (no bias) as RNNCell's");

  torch::nn::RNNCell relu_cell(torch::nn::RNNCellOptions(3, 4).nonlinearity(torch::kReLU));
  fill_weights(*relu_cell);
  check(close(torch::rnn_relu_cell(x, h, relu_cell->weight_ih, relu_cell->weight_hh, relu_cell->bias_ih,
                                   relu_cell->bias_hh),
              relu_cell->forward(x, h), 1e-5),
        "torch::rnn_relu_cell as RNNCell(relu)'s");
}

}  // namespace

int main() {
  section("padded_layers", padded_layers);
  section("packed_layers", packed_layers);
  section("cells", cells);
  return finish("rnn_ops");
}
