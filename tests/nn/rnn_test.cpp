// Recurrent layers and cells against PyTorch (tests/fixtures/rnn.json from
// tests/fixtures/generate_rnn.py): a PyTorch state_dict loads one to one, outputs, final states and
// gradients match; reprs, state-dict names, initialisation, dropout and errors.
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include "support/error_of.h"
#include "support/pytorch_fixture.h"
#include "nn/rnn_fixture.h"

#include <sstream>

#include <cohort/cohort.h>
#include <nlohmann/json.hpp>

using namespace cohort;
using json = nlohmann::json;
using ::testing::HasSubstr;

namespace {

std::string repr(const nn::Module& m) {
  std::ostringstream os;
  m.pretty_print(os);
  return os.str();
}

// A layer or cell built from the fixture's kind and keyword arguments, and how to run it.
struct Built {
  std::shared_ptr<nn::Module> module;
  // Runs forward on x with the initial states (none, h0, or h0 and c0); returns the results in
  // the fixture's order: [output,] h_n [, c_n] (cells: h' [, c']).
  std::function<std::vector<Tensor>(const Tensor&, const std::vector<Tensor>&)> run;
};

Built build(const std::string& kind, const json& o) {
  int64_t in = o.at("input_size"), hid = o.at("hidden_size");
  int64_t layers = o.value("num_layers", 1);
  bool bias = o.value("bias", true), bf = o.value("batch_first", false), bi = o.value("bidirectional", false);
  bool relu = o.value("nonlinearity", std::string("tanh")) == "relu";
  auto h_at = [](const std::vector<Tensor>& hx, size_t i) { return hx.size() > i ? hx[i] : Tensor(); };
  if (kind == "RNN") {
    auto opts = nn::RNNOptions(in, hid).num_layers(layers).bias(bias).batch_first(bf).bidirectional(bi);
    if (relu) opts.nonlinearity(kReLU);
    nn::RNN m(opts);
    return {m.ptr(), [m, h_at](const Tensor& x, const std::vector<Tensor>& hx) mutable {
              auto [out, h] = m->forward(x, h_at(hx, 0));
              return std::vector<Tensor>{out, h};
            }};
  }
  if (kind == "LSTM") {
    nn::LSTM m(nn::LSTMOptions(in, hid).num_layers(layers).bias(bias).batch_first(bf).bidirectional(bi).proj_size(
        o.value("proj_size", 0)));
    return {m.ptr(), [m](const Tensor& x, const std::vector<Tensor>& hx) mutable {
              auto [out, st] = hx.empty() ? m->forward(x) : m->forward(x, std::make_tuple(hx[0], hx[1]));
              return std::vector<Tensor>{out, std::get<0>(st), std::get<1>(st)};
            }};
  }
  if (kind == "GRU") {
    nn::GRU m(nn::GRUOptions(in, hid).num_layers(layers).bias(bias).batch_first(bf).bidirectional(bi));
    return {m.ptr(), [m, h_at](const Tensor& x, const std::vector<Tensor>& hx) mutable {
              auto [out, h] = m->forward(x, h_at(hx, 0));
              return std::vector<Tensor>{out, h};
            }};
  }
  if (kind == "RNNCell") {
    auto opts = nn::RNNCellOptions(in, hid).bias(bias);
    if (relu) opts.nonlinearity(kReLU);
    nn::RNNCell m(opts);
    return {m.ptr(), [m, h_at](const Tensor& x, const std::vector<Tensor>& hx) mutable {
              return std::vector<Tensor>{m->forward(x, h_at(hx, 0))};
            }};
  }
  if (kind == "LSTMCell") {
    nn::LSTMCell m(nn::LSTMCellOptions(in, hid).bias(bias));
    return {m.ptr(), [m](const Tensor& x, const std::vector<Tensor>& hx) mutable {
              auto [h, c] = hx.empty() ? m->forward(x) : m->forward(x, std::make_tuple(hx[0], hx[1]));
              return std::vector<Tensor>{h, c};
            }};
  }
  nn::GRUCell m(nn::GRUCellOptions(in, hid).bias(bias));
  return {m.ptr(), [m, h_at](const Tensor& x, const std::vector<Tensor>& hx) mutable {
            return std::vector<Tensor>{m->forward(x, h_at(hx, 0))};
          }};
}

}  // namespace

TEST(RNNFixture, MatchesPyTorchStateDictValuesAndGradients) {
  const json& fixture = cohort::testing::load_fixture("rnn.json");
  int checked = 0;
  for (const json& c : fixture.at("cases")) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    Built b = build(c.at("kind"), c.at("options"));
    // The state dict's keys, in PyTorch's order, and the repr.
    std::vector<std::string> keys;
    for (const auto& item : b.module->state_dict()) keys.push_back(item.key());
    EXPECT_EQ(keys, c.at("state_dict_keys").get<std::vector<std::string>>());
    EXPECT_EQ(repr(*b.module), c.at("repr").get<std::string>());
    cohort::testing::load_case_state(*b.module, c);

    Tensor x = cohort::testing::decode_tensor(c.at("input")).requires_grad_();
    std::vector<std::string> wrt_names{"input"};
    std::vector<Tensor> hx = cohort::testing::initial_states(c, wrt_names);
    std::vector<Tensor> results = b.run(x, hx);
    std::vector<std::string> result_names;
    for (const auto& [key, value] : c.at("results").items()) result_names.push_back(key);
    // items() walks keys sorted; the fixture order is output, h_n, c_n (or h_n, c_n for cells).
    std::sort(result_names.begin(), result_names.end(), [](const std::string& a, const std::string& b2) {
      auto rank = [](const std::string& s) { return s == "output" ? 0 : s == "h_n" ? 1 : 2; };
      return rank(a) < rank(b2);
    });
    ASSERT_EQ(results.size(), result_names.size());
    cohort::testing::expect_results_and_grads(name, c, results, result_names, x, hx, *b.module, wrt_names);
    ++checked;
  }
  EXPECT_EQ(checked, 13);
}

TEST(RNNModule, ReprLikePyTorch) {
  // Each expected string printed by torch 1.13 for the same arguments.
  EXPECT_EQ(repr(*nn::LSTM(nn::LSTMOptions(10, 20).num_layers(2).batch_first(true).bidirectional(true))),
            "LSTM(10, 20, num_layers=2, batch_first=True, bidirectional=True)");
  EXPECT_EQ(repr(*nn::RNN(nn::RNNOptions(3, 4).nonlinearity(kReLU).bias(false).dropout(0.5).num_layers(2))),
            "RNN(3, 4, num_layers=2, bias=False, dropout=0.5)");
  EXPECT_EQ(repr(*nn::LSTM(nn::LSTMOptions(3, 4).proj_size(2))), "LSTM(3, 4, proj_size=2)");
  EXPECT_EQ(repr(*nn::GRU(3, 4)), "GRU(3, 4)");
  EXPECT_EQ(repr(*nn::RNNCell(nn::RNNCellOptions(3, 4).nonlinearity(kReLU).bias(false))),
            "RNNCell(3, 4, bias=False, nonlinearity=relu)");
  EXPECT_EQ(repr(*nn::LSTMCell(3, 4)), "LSTMCell(3, 4)");
  EXPECT_EQ(repr(*nn::GRUCell(nn::GRUCellOptions(3, 4).bias(false))), "GRUCell(3, 4, bias=False)");
}

TEST(RNNModule, StateDictNamesAndShapesLikePyTorch) {
  nn::LSTM lstm(nn::LSTMOptions(3, 5).num_layers(2).bidirectional(true).proj_size(2));
  std::vector<std::string> names;
  for (const auto& item : lstm->named_parameters()) names.push_back(item.key());
  // torch 1.13: list(nn.LSTM(3, 5, num_layers=2, bidirectional=True, proj_size=2).state_dict())
  std::vector<std::string> want{
      "weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0", "weight_hr_l0",
      "weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse", "bias_hh_l0_reverse", "weight_hr_l0_reverse",
      "weight_ih_l1", "weight_hh_l1", "bias_ih_l1", "bias_hh_l1", "weight_hr_l1",
      "weight_ih_l1_reverse", "weight_hh_l1_reverse", "bias_ih_l1_reverse", "bias_hh_l1_reverse", "weight_hr_l1_reverse"};
  EXPECT_EQ(names, want);
  EXPECT_EQ(lstm->flat_weights_names(), want);
  EXPECT_EQ(lstm->all_weights().size(), want.size());
  auto p = lstm->named_parameters();
  EXPECT_EQ(Shape(p["weight_ih_l0"].sizes()), (Shape{20, 3}));
  EXPECT_EQ(Shape(p["weight_hh_l0"].sizes()), (Shape{20, 2}));
  EXPECT_EQ(Shape(p["weight_hr_l0"].sizes()), (Shape{2, 5}));
  EXPECT_EQ(Shape(p["weight_ih_l1_reverse"].sizes()), (Shape{20, 4}));
  nn::GRU gru(nn::GRUOptions(3, 4).bias(false));
  std::vector<std::string> gnames;
  for (const auto& item : gru->named_parameters()) gnames.push_back(item.key());
  EXPECT_EQ(gnames, (std::vector<std::string>{"weight_ih_l0", "weight_hh_l0"}));
  nn::LSTMCell cell(3, 4);
  std::vector<std::string> cnames;
  for (const auto& item : cell->named_parameters()) cnames.push_back(item.key());
  EXPECT_EQ(cnames, (std::vector<std::string>{"weight_ih", "weight_hh", "bias_ih", "bias_hh"}));
  EXPECT_EQ(Shape(cell->weight_ih.sizes()), (Shape{16, 3}));
}

TEST(RNNModule, InitialisedUniformInOneOverSqrtHidden) {
  manual_seed(3);
  nn::GRU gru(nn::GRUOptions(30, 16).num_layers(2));
  for (const auto& item : gru->named_parameters()) {
    EXPECT_LE(item.value().abs().max().item<double>(), 0.25) << item.key();
    EXPECT_GT(item.value().abs().max().item<double>(), 0.2) << item.key();
  }
}

TEST(RNNModule, BatchFirstAndUnbatchedAgreeWithTimeMajor) {
  manual_seed(4);
  nn::LSTM tm(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true));
  nn::LSTM bf(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).batch_first(true));
  bf->load_state_dict(tm->state_dict());
  Tensor x = randn({5, 2, 3});
  auto [y, st] = tm->forward(x);
  auto [yb, stb] = bf->forward(x.transpose(0, 1));
  EXPECT_EQ(Shape(y.sizes()), (Shape{5, 2, 8}));
  EXPECT_LT(cohort::testing::max_abs_diff(yb.transpose(0, 1), y), 1e-6);
  EXPECT_LT(cohort::testing::max_abs_diff(std::get<0>(stb), std::get<0>(st)), 1e-6);
  // Sample 1 alone, unbatched.
  auto [yu, stu] = tm->forward(x.select(1, 1));
  EXPECT_EQ(Shape(yu.sizes()), (Shape{5, 8}));
  EXPECT_EQ(Shape(std::get<1>(stu).sizes()), (Shape{4, 4}));
  EXPECT_LT(cohort::testing::max_abs_diff(yu, y.select(1, 1)), 1e-6);
  // Through the holder's call operator, as libtorch code calls a module.
  auto [yc, stc] = tm(x);
  EXPECT_LT(cohort::testing::max_abs_diff(yc, y), 1e-7);
  nn::GRUCell cell(3, 4);
  EXPECT_EQ(Shape(cell(x[0], randn({2, 4})).sizes()), (Shape{2, 4}));
}

TEST(RNNModule, DropoutBetweenLayersOnlyInTraining) {
  manual_seed(5);
  nn::GRU gru(nn::GRUOptions(3, 4).num_layers(2).dropout(0.5));
  nn::GRU plain(nn::GRUOptions(3, 4).num_layers(2));
  plain->load_state_dict(gru->state_dict());
  Tensor x = randn({6, 2, 3});
  auto ref = std::get<0>(plain->forward(x));
  EXPECT_GT(cohort::testing::max_abs_diff(std::get<0>(gru->forward(x)), ref), 1e-4);
  gru->eval();
  EXPECT_LT(cohort::testing::max_abs_diff(std::get<0>(gru->forward(x)), ref), 1e-7);
}

TEST(RNNModule, CloneCopiesValues) {
  nn::LSTM lstm(nn::LSTMOptions(3, 4).proj_size(2));
  auto copy = std::dynamic_pointer_cast<nn::LSTMImpl>(lstm->clone());
  ASSERT_TRUE(copy);
  Tensor x = randn({3, 2, 3});
  EXPECT_LT(cohort::testing::max_abs_diff(std::get<0>(copy->forward(x)), std::get<0>(lstm->forward(x))), 1e-7);
}

TEST(RNNModule, ErrorsNameTheLayerAndTheShapes) {
  using cohort::testing::error_of;
  nn::LSTM lstm(3, 4);
  EXPECT_THAT(error_of([&] { lstm->forward(randn({2, 5, 7})); }),
              HasSubstr("LSTM: expected input_size=3 features in the input's last dim, got input of shape [2, 5, 7]"));
  EXPECT_THAT(error_of([&] { lstm->forward(randn({2, 5, 3, 1})); }),
              HasSubstr("LSTM: expected a 2-d (unbatched) or 3-d (batched) input, got a 4-d input"));
  EXPECT_THAT(error_of([&] { lstm->forward(randn({5, 2, 3}), std::make_tuple(randn({1, 3, 4}), randn({1, 2, 4}))); }),
              HasSubstr("LSTM: expected h0 (hx[0]) of shape [1, 2, 4]"));
  EXPECT_THAT(error_of([&] { lstm->forward(randn({5, 2, 3}), std::make_tuple(randn({1, 2, 4}), randn({2, 2, 4}))); }),
              HasSubstr("got [2, 2, 4]"));
  EXPECT_THAT(error_of([&] { lstm->forward(randn({5, 2, 3}, TensorOptions(kFloat64))); }),
              HasSubstr("LSTM: the input has dtype"));
  nn::RNN rnn(3, 4);
  EXPECT_THAT(error_of([&] { rnn->forward(randn({5, 3}), randn({1, 2, 4})); }),
              HasSubstr("RNN: for unbatched 2-d input, h0 (hx) should be 2-d of shape [1, 4], got shape [1, 2, 4]"));
  EXPECT_THAT(error_of([&] { nn::GRU(nn::GRUOptions(3, 4).dropout(1.5)); }),
              HasSubstr("GRU: dropout should be a number in [0, 1]"));
  EXPECT_THAT(error_of([&] { nn::LSTM(nn::LSTMOptions(3, 4).proj_size(4)); }),
              HasSubstr("LSTM: proj_size must be zero (no projection) or positive and smaller than hidden_size=4, got 4"));
  EXPECT_THAT(error_of([&] { nn::RNN(nn::RNNOptions(3, 0)); }), HasSubstr("RNN: hidden_size must be greater than zero"));
  EXPECT_THAT(error_of([&] { nn::RNN(nn::RNNOptions(3, 4).num_layers(0)); }),
              HasSubstr("RNN: num_layers must be greater than zero, got 0"));
  nn::RNNCell cell(3, 4);
  EXPECT_THAT(error_of([&] { cell->forward(randn({2, 5})); }),
              HasSubstr("RNNCell: expected input_size=3 features in the input's last dim, got input of shape [2, 5]"));
  EXPECT_THAT(error_of([&] { cell->forward(randn({2, 3}), randn({3, 4})); }),
              HasSubstr("RNNCell: expected hx of shape [2, 4] (batch, hidden_size) for input of shape [2, 3], got [3, 4]"));
  nn::LSTMCell lcell(3, 4);
  EXPECT_THAT(error_of([&] { lcell->forward(randn({3}), std::make_tuple(randn({4}), randn({2, 4}))); }),
              HasSubstr("LSTMCell: expected hx[1] (c) of shape [4] (hidden_size)"));
}

// A padded batch runs the LSTM's fused time loop (lstm_layer); a packed batch of equal lengths runs
// the same steps through the composed per-step loop. Both give the same outputs, states and
// gradients, forward and reverse, and with the final states' gradients too.
TEST(RNNModule, FusedLSTMLoopMatchesTheComposedSteps) {
  manual_seed(6);
  nn::LSTM lstm(nn::LSTMOptions(3, 5).num_layers(2).bidirectional(true));
  lstm->to(kFloat64);
  Tensor x = randn({4, 3, 3}, kFloat64).requires_grad_(true);
  Tensor h0 = randn({4, 3, 5}, kFloat64).requires_grad_(true), c0 = randn({4, 3, 5}, kFloat64).requires_grad_(true);
  auto run = [&](bool packed) {
    for (auto& p : lstm->parameters()) p.mutable_grad() = Tensor();
    x.mutable_grad() = Tensor(), h0.mutable_grad() = Tensor(), c0.mutable_grad() = Tensor();
    Tensor y, hn, cn;
    if (packed) {
      auto [py, st] = lstm->forward_with_packed_input(
          nn::utils::rnn::pack_padded_sequence(x, tensor(std::vector<int64_t>{4, 4, 4})), std::make_tuple(h0, c0));
      y = std::get<0>(nn::utils::rnn::pad_packed_sequence(py));
      hn = std::get<0>(st), cn = std::get<1>(st);
    } else {
      auto [py, st] = lstm->forward(x, std::make_tuple(h0, c0));
      y = py, hn = std::get<0>(st), cn = std::get<1>(st);
    }
    ((y * y).sum() + (hn * 2).sum() + (cn * cn).sum()).backward();
    std::vector<Tensor> all{y.detach(), hn.detach(), cn.detach(), x.grad(), h0.grad(), c0.grad()};
    for (auto& p : lstm->parameters()) all.push_back(p.grad().clone());
    return all;
  };
  auto fused = run(false), composed = run(true);
  ASSERT_EQ(fused.size(), composed.size());
  for (size_t i = 0; i < fused.size(); ++i) EXPECT_LT(cohort::testing::max_abs_diff(fused[i], composed[i]), 1e-12) << i;
}
