// The libtorch-port promise for recurrent layers: options, parameter names and shapes, forward
// signatures and return types of RNN, LSTM, GRU and their cells, and their values against the
// gate equations written out with tensor ops (compat.h has the rules).
#include "compat.h"

using namespace compat;

namespace {

torch::Tensor input_values(std::vector<int64_t> sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return torch::arange(n, torch::kFloat32).mul(0.71).cos().view(sizes);
}

std::vector<std::string> names_of(const torch::nn::Module& m) {
  std::vector<std::string> names;
  for (const auto& item : m.named_parameters()) names.push_back(item.key());
  return names;
}

// ---------------------------------------------------------------------------------------------------
void rnn_layout() {
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).batch_first(true));
  std::vector<std::string> want{"weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0",
                                "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse", "bias_hh_l0_reverse",
                                "weight_ih_l1", "weight_hh_l1", "bias_ih_l1", "bias_hh_l1",
                                "weight_ih_l1_reverse", "weight_hh_l1_reverse", "bias_ih_l1_reverse", "bias_hh_l1_reverse"};
  check(names_of(*lstm) == want, "LSTM parameter names");
  auto params = lstm->named_parameters();
  check(has_sizes(params["weight_ih_l1"], {16, 8}), "LSTM weight_ih_l1 is [4*hidden, 2*hidden]");
  auto out = lstm->forward(input_values({2, 5, 3}));
  check(has_sizes(std::get<0>(out), {2, 5, 8}), "LSTM batch_first output [N, T, 2*hidden]");
  check(has_sizes(std::get<0>(std::get<1>(out)), {4, 2, 4}) && has_sizes(std::get<1>(std::get<1>(out)), {4, 2, 4}),
        "LSTM h_n and c_n [layers*directions, N, hidden]");
  torch::nn::GRUCell cell(torch::nn::GRUCellOptions(3, 4).bias(false));
  check(names_of(*cell) == std::vector<std::string>{"weight_ih", "weight_hh"}, "GRUCell(bias=false) names");
}

// One-layer LSTM against the equations (gates i, f, g, o), and LSTMCell against the same step.
void lstm_values() {
  torch::nn::LSTM lstm(torch::nn::LSTMOptions(3, 4));
  fill_weights(*lstm);
  auto p = lstm->named_parameters();
  auto x = input_values({3, 2, 3});
  auto h = torch::full({2, 4}, 0.1), c = torch::full({2, 4}, -0.2);
  auto out = lstm->forward(x, std::make_tuple(h.unsqueeze(0), c.unsqueeze(0)));
  torch::nn::LSTMCell cell(3, 4);
  {
    torch::NoGradGuard no_grad;
    for (const char* n : {"weight_ih", "weight_hh", "bias_ih", "bias_hh"})
      cell->named_parameters()[n].copy_(p[std::string(n) + "_l0"]);
  }
  auto hc = cell->forward(x[0], std::make_tuple(h, c));
  std::vector<torch::Tensor> hs;
  for (int64_t t = 0; t < 3; ++t) {
    auto gates = x[t].matmul(p["weight_ih_l0"].t()) + p["bias_ih_l0"] + h.matmul(p["weight_hh_l0"].t()) + p["bias_hh_l0"];
    auto g = gates.chunk(4, 1);
    c = torch::sigmoid(g[1]) * c + torch::sigmoid(g[0]) * torch::tanh(g[2]);
    h = torch::sigmoid(g[3]) * torch::tanh(c);
    hs.push_back(h);
    if (t == 0) check(close(std::get<0>(hc), h, 1e-5) && close(std::get<1>(hc), c, 1e-5), "LSTMCell one step");
  }
  check(close(std::get<0>(out), torch::stack(hs), 1e-5), "LSTM output by the equations");
  check(close(std::get<1>(std::get<1>(out))[0], c, 1e-5), "LSTM c_n by the equations");
}

// GRU (one sample; libtorch 1.13's C++ GRU takes only 3-d input) against
// n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), h' = (1 - z) * n + z * h.
void gru_values() {
  torch::nn::GRU gru(torch::nn::GRUOptions(3, 4));
  fill_weights(*gru);
  auto p = gru->named_parameters();
  auto x = input_values({4, 1, 3});
  auto h = torch::full({4}, 0.3);
  auto out = gru->forward(x, h.view({1, 1, 4}));
  check(has_sizes(std::get<0>(out), {4, 1, 4}) && has_sizes(std::get<1>(out), {1, 1, 4}), "GRU shapes");
  for (int64_t t = 0; t < 4; ++t) {
    auto xi = (p["weight_ih_l0"].matmul(x[t][0]) + p["bias_ih_l0"]).chunk(3, 0);
    auto hh = (p["weight_hh_l0"].matmul(h) + p["bias_hh_l0"]).chunk(3, 0);
    auto r = torch::sigmoid(xi[0] + hh[0]), z = torch::sigmoid(xi[1] + hh[1]);
    auto n = torch::tanh(xi[2] + r * hh[2]);
    h = (1 - z) * n + z * h;
  }
  check(close(std::get<1>(out)[0][0], h, 1e-5), "GRU h_n by the equations");
}

// RNN with relu and its cell.
void rnn_values() {
  torch::nn::RNN rnn(torch::nn::RNNOptions(3, 4).nonlinearity(torch::kReLU).bias(false));
  fill_weights(*rnn);
  auto p = rnn->named_parameters();
  auto x = input_values({2, 1, 3});
  auto out = rnn->forward(x);
  auto h = torch::zeros({1, 4});
  for (int64_t t = 0; t < 2; ++t) h = torch::relu(x[t].matmul(p["weight_ih_l0"].t()) + h.matmul(p["weight_hh_l0"].t()));
  check(close(std::get<1>(out)[0], h, 1e-5), "RNN(relu) h_n by the equations");
  torch::nn::RNNCell cell(torch::nn::RNNCellOptions(3, 4).nonlinearity(torch::kTanh));
  check(has_sizes(cell->forward(input_values({2, 3})), {2, 4}), "RNNCell output [N, hidden]");
}

}  // namespace

int main() {
  section("rnn_layout", rnn_layout);
  section("lstm_values", lstm_values);
  section("gru_values", gru_values);
  section("rnn_values", rnn_values);
  return finish("rnn");
}
