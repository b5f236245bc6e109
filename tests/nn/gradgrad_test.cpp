// Every nn layer through gradcheck and gradgradcheck in float64, with respect to its inputs and its
// parameters: the layers' backward must be differentiable again under create_graph (gradient
// penalties, MAML, Hessian-vector products), as PyTorch's modules are.
#include <gtest/gtest.h>

#include "support/gradcheck.h"

#include <functional>

#include <cohort/cohort.h>

using namespace cohort;
using cohort::testing::gradcheck;
using cohort::testing::gradgradcheck;

namespace {

using In = std::vector<Tensor>;
using Params = std::vector<Tensor*>;  // a layer's parameter members, as forward reads them

// gradcheck (unless first_order is false) and gradgradcheck of forward(inputs) with respect to the
// float64 inputs and the defined parameters in `params`. Each evaluation points the members at the
// tensors being checked, then back.
::testing::AssertionResult check_layer(const std::string& name, const Params& params, const In& inputs,
                                       const std::function<Tensor(const In&)>& forward, bool first_order = true) {
  In args = inputs;
  for (Tensor* p : params)
    if (p->defined()) args.push_back(p->detach());
  auto fn = [&](const In& a) {
    std::vector<Tensor> originals;
    size_t k = inputs.size();
    for (Tensor* p : params) {
      originals.push_back(*p);
      if (p->defined()) *p = a[k++];
    }
    struct Restore {
      const Params& params;
      std::vector<Tensor>& originals;
      ~Restore() {
        for (size_t i = 0; i < params.size(); ++i) *params[i] = originals[i];
      }
    } restore{params, originals};
    return std::vector<Tensor>{forward(In(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(inputs.size())))};
  };
  if (first_order) {
    ::testing::AssertionResult first = gradcheck(fn, args, 1e-6, 1e-5, 1e-3, name);
    if (!first) return first;
  }
  return gradgradcheck(fn, args, 1e-6, 1e-5, 1e-3, name);
}

Tensor randn64(Shape sizes) { return randn(sizes, TensorOptions(kFloat64)); }
// Values in (lo, hi), away from both ends.
Tensor uniform64(Shape sizes, double lo, double hi) {
  return rand(sizes, TensorOptions(kFloat64)) * (0.8 * (hi - lo)) + (lo + 0.1 * (hi - lo));
}

template <class Holder>
Holder in_float64(Holder m) {
  m->to(kFloat64);
  return m;
}

class LayerGradgrad : public ::testing::Test {
 protected:
  void SetUp() override { manual_seed(7); }
};

TEST_F(LayerGradgrad, Linear) {
  auto m = in_float64(nn::Linear(3, 2));
  EXPECT_TRUE(check_layer("Linear", {&m->weight, &m->bias}, {randn64({4, 3})}, [&](const In& x) { return m(x[0]); }));
  auto nb = in_float64(nn::Linear(nn::LinearOptions(3, 2).bias(false)));
  EXPECT_TRUE(check_layer("Linear(bias=false)", {&nb->weight}, {randn64({2, 5, 3})},
                          [&](const In& x) { return nb(x[0]); }));
}

TEST_F(LayerGradgrad, Conv1d) {
  auto m = in_float64(nn::Conv1d(nn::Conv1dOptions(4, 6, 3).stride(2).padding(1).groups(2)));
  EXPECT_TRUE(check_layer("Conv1d", {&m->weight, &m->bias}, {randn64({2, 4, 7})}, [&](const In& x) { return m(x[0]); }));
}

TEST_F(LayerGradgrad, Conv2d) {
  auto m = in_float64(nn::Conv2d(nn::Conv2dOptions(2, 3, {3, 2}).padding(1).dilation({1, 2})));
  EXPECT_TRUE(check_layer("Conv2d", {&m->weight, &m->bias}, {randn64({2, 2, 5, 6})}, [&](const In& x) { return m(x[0]); }));
  auto s = in_float64(nn::Conv2d(nn::Conv2dOptions(4, 2, 3).stride(2).groups(2).bias(false)));
  EXPECT_TRUE(check_layer("Conv2d(stride=2, groups=2)", {&s->weight}, {randn64({1, 4, 6, 5})},
                          [&](const In& x) { return s(x[0]); }));
}

TEST_F(LayerGradgrad, ConvTranspose) {
  auto m = in_float64(nn::ConvTranspose2d(nn::ConvTranspose2dOptions(4, 2, 3).stride(2).padding(1).output_padding(1).groups(2)));
  EXPECT_TRUE(check_layer("ConvTranspose2d", {&m->weight, &m->bias}, {randn64({2, 4, 3, 2})},
                          [&](const In& x) { return m(x[0]); }));
  auto d = in_float64(nn::ConvTranspose1d(nn::ConvTranspose1dOptions(2, 3, 2).dilation(2).output_padding(1).bias(false)));
  EXPECT_TRUE(check_layer("ConvTranspose1d(dilation=2, output_padding=1)", {&d->weight}, {randn64({2, 2, 4})},
                          [&](const In& x) { return d(x[0]); }));
}

TEST_F(LayerGradgrad, Pooling) {
  nn::MaxPool2d max(nn::MaxPool2dOptions(2).stride(1));
  EXPECT_TRUE(check_layer("MaxPool2d", {}, {randn64({2, 2, 4, 3})}, [&](const In& x) { return max(x[0]); }));
  nn::AvgPool2d avg(nn::AvgPool2dOptions(3).stride(2).padding(1).count_include_pad(false));
  EXPECT_TRUE(check_layer("AvgPool2d", {}, {randn64({1, 2, 5, 4})}, [&](const In& x) { return avg(x[0]); }));
  nn::AdaptiveAvgPool2d aavg(nn::AdaptiveAvgPool2dOptions({3, 2}));
  EXPECT_TRUE(check_layer("AdaptiveAvgPool2d", {}, {randn64({2, 1, 5, 5})}, [&](const In& x) { return aavg(x[0]); }));
  nn::AdaptiveMaxPool2d amax(nn::AdaptiveMaxPool2dOptions(2));
  EXPECT_TRUE(check_layer("AdaptiveMaxPool2d", {}, {randn64({2, 1, 5, 3})}, [&](const In& x) { return amax(x[0]); }));
}

TEST_F(LayerGradgrad, BatchNorm) {
  auto bn1 = in_float64(nn::BatchNorm1d(3));
  EXPECT_TRUE(check_layer("BatchNorm1d (train)", {&bn1->weight, &bn1->bias}, {randn64({5, 3})},
                          [&](const In& x) { return bn1(x[0]); }));
  auto bn2 = in_float64(nn::BatchNorm2d(2));
  EXPECT_TRUE(check_layer("BatchNorm2d (train)", {&bn2->weight, &bn2->bias}, {randn64({3, 2, 2, 3})},
                          [&](const In& x) { return bn2(x[0]); }));
  bn2->eval();  // running statistics from the training calls above
  EXPECT_TRUE(check_layer("BatchNorm2d (eval)", {&bn2->weight, &bn2->bias}, {randn64({2, 2, 3, 2})},
                          [&](const In& x) { return bn2(x[0]); }));
  auto plain = in_float64(nn::BatchNorm1d(nn::BatchNorm1dOptions(2).affine(false).track_running_stats(false)));
  EXPECT_TRUE(check_layer("BatchNorm1d (no affine, no stats)", {}, {randn64({3, 2, 4})},
                          [&](const In& x) { return plain(x[0]); }));
}

TEST_F(LayerGradgrad, LayerNormAndGroupNorm) {
  auto ln = in_float64(nn::LayerNorm(nn::LayerNormOptions({2, 3})));
  EXPECT_TRUE(check_layer("LayerNorm", {&ln->weight, &ln->bias}, {randn64({2, 2, 3})}, [&](const In& x) { return ln(x[0]); }));
  auto gn = in_float64(nn::GroupNorm(2, 4));
  EXPECT_TRUE(check_layer("GroupNorm", {&gn->weight, &gn->bias}, {randn64({2, 4, 3})}, [&](const In& x) { return gn(x[0]); }));
}

TEST_F(LayerGradgrad, Embedding) {
  Tensor indices = tensor({{0, 1, 4}, {4, 2, 1}}, TensorOptions(kInt64));
  auto m = in_float64(nn::Embedding(5, 3));
  EXPECT_TRUE(check_layer("Embedding", {&m->weight}, {indices}, [&](const In& x) { return m(x[0]); }));
  // The padding row gets no gradient although the output reads it (PyTorch's rule), so only the
  // second derivatives are checked.
  auto pad = in_float64(nn::Embedding(nn::EmbeddingOptions(5, 3).padding_idx(1)));
  EXPECT_TRUE(check_layer("Embedding(padding_idx)", {&pad->weight}, {indices}, [&](const In& x) { return pad(x[0]); },
                          /*first_order=*/false));
}

TEST_F(LayerGradgrad, BasicLayers) {
  nn::Dropout dropout(0.3);
  dropout->eval();
  EXPECT_TRUE(check_layer("Dropout (eval)", {}, {randn64({3, 4})}, [&](const In& x) { return dropout(x[0]); }));
  nn::Dropout2d dropout2d(0.3);
  dropout2d->eval();
  EXPECT_TRUE(check_layer("Dropout2d (eval)", {}, {randn64({2, 3, 2, 2})}, [&](const In& x) { return dropout2d(x[0]); }));
  nn::Identity identity;
  EXPECT_TRUE(check_layer("Identity", {}, {randn64({3})}, [&](const In& x) { return identity(x[0]); }));
  nn::Flatten flatten;
  EXPECT_TRUE(check_layer("Flatten", {}, {randn64({2, 3, 2})}, [&](const In& x) { return flatten(x[0]); }));
}

TEST_F(LayerGradgrad, Activations) {
  const Tensor x = randn64({3, 4});
  auto check = [&](const std::string& name, auto m) {
    EXPECT_TRUE(check_layer(name, {}, {x}, [&](const In& in) { return m(in[0]); }));
  };
  check("ReLU", nn::ReLU());
  check("LeakyReLU", nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)));
  check("GELU", nn::GELU());
  check("GELU(tanh)", nn::GELU(nn::GELUOptions().approximate("tanh")));
  check("SiLU", nn::SiLU());
  check("Sigmoid", nn::Sigmoid());
  check("Tanh", nn::Tanh());
  check("Softmax", nn::Softmax(1));
  check("LogSoftmax", nn::LogSoftmax(0));
  // In place on an intermediate result.
  auto fc = in_float64(nn::Linear(4, 3));
  nn::ReLU relu_(true);
  nn::LeakyReLU leaky_(nn::LeakyReLUOptions().negative_slope(0.1).inplace(true));
  EXPECT_TRUE(check_layer("Linear + ReLU(inplace) + LeakyReLU(inplace)", {&fc->weight, &fc->bias}, {x},
                          [&](const In& in) { return leaky_(relu_(fc(in[0])) - 0.2); }));
}

TEST_F(LayerGradgrad, Losses) {
  const Tensor input = randn64({3, 4}), target = randn64({3, 4});
  auto check = [&](const std::string& name, auto m, const In& xs) {
    EXPECT_TRUE(check_layer(name, {}, xs, [&](const In& in) { return m(in[0], in[1]); }));
  };
  check("MSELoss", nn::MSELoss(), {input, target});
  check("L1Loss", nn::L1Loss(nn::L1LossOptions(kSum)), {input, target});
  check("SmoothL1Loss", nn::SmoothL1Loss(nn::SmoothL1LossOptions().beta(0.5)), {input, target});
  nn::SmoothL1LossOptions none;
  none.reduction(kNone);
  check("SmoothL1Loss(none)", nn::SmoothL1Loss(none), {input, target});
  const Tensor classes = tensor({2, 0, 3}, TensorOptions(kInt64));
  check("CrossEntropyLoss", nn::CrossEntropyLoss(), {input, classes});
  check("CrossEntropyLoss(weight, label_smoothing, ignore_index)",
        nn::CrossEntropyLoss(nn::CrossEntropyLossOptions()
                                 .weight(tensor({1.0, 0.5, 2.0, 1.5}, TensorOptions(kFloat64)))
                                 .label_smoothing(0.2)
                                 .ignore_index(0)),
        {input, classes});
  check("CrossEntropyLoss(probabilities)", nn::CrossEntropyLoss(), {input, softmax(target, 1)});
  check("NLLLoss", nn::NLLLoss(nn::NLLLossOptions().reduction(kSum)), {log_softmax(input, 1), classes});
  check("BCELoss", nn::BCELoss(), {uniform64({3, 4}, 0, 1), uniform64({3, 4}, 0, 1)});
  check("BCEWithLogitsLoss",
        nn::BCEWithLogitsLoss(nn::BCEWithLogitsLossOptions().pos_weight(tensor({1.0, 2.0, 0.5, 3.0}, TensorOptions(kFloat64)))),
        {input, uniform64({3, 4}, 0, 1)});
}

// A small network end to end, as a gradient penalty would differentiate it.
TEST_F(LayerGradgrad, SequentialNetwork) {
  nn::Sequential net(nn::Conv2d(nn::Conv2dOptions(1, 2, 3).padding(1)), nn::BatchNorm2d(2), nn::ReLU(),
                     nn::MaxPool2d(2), nn::Flatten(), nn::Linear(8, 2), nn::Tanh());
  net->to(kFloat64);
  auto conv = net->ptr<nn::Conv2dImpl>(0);
  auto bn = net->ptr<nn::BatchNorm2dImpl>(1);
  auto fc = net->ptr<nn::LinearImpl>(5);
  EXPECT_TRUE(check_layer("Sequential(Conv2d, BatchNorm2d, ReLU, MaxPool2d, Flatten, Linear, Tanh)",
                          {&conv->weight, &conv->bias, &bn->weight, &bn->bias, &fc->weight, &fc->bias},
                          {randn64({2, 1, 4, 4})}, [&](const In& x) { return net->forward(x[0]); }));
}

// Recurrent layers: every output (sequence output and final states) in one tensor, with respect to
// the input, the initial states and every parameter.
Tensor flat_cat(const std::vector<Tensor>& ts) {
  std::vector<Tensor> flat;
  for (const Tensor& t : ts) flat.push_back(t.reshape({-1}));
  return cat(flat, 0);
}

template <class Impl>
Params weights_of(Impl& m) {
  Params ps;
  for (Tensor& w : m.flat_weights()) ps.push_back(&w);
  return ps;
}

TEST_F(LayerGradgrad, RNN) {
  auto m = in_float64(nn::RNN(nn::RNNOptions(2, 2).num_layers(2).bidirectional(true)));
  EXPECT_TRUE(check_layer("RNN(2, 2, num_layers=2, bidirectional=True)", weights_of(*m), {randn64({3, 2, 2}), randn64({4, 2, 2})},
                          [&](const In& x) {
                            auto [y, h] = m->forward(x[0], x[1]);
                            return flat_cat({y, h});
                          }));
  auto r = in_float64(nn::RNN(nn::RNNOptions(2, 3).nonlinearity(kReLU).batch_first(true)));
  EXPECT_TRUE(check_layer("RNN(relu, batch_first)", weights_of(*r), {randn64({2, 3, 2})}, [&](const In& x) {
    auto [y, h] = r->forward(x[0]);
    return flat_cat({y, h});
  }));
}

TEST_F(LayerGradgrad, LSTM) {
  auto m = in_float64(nn::LSTM(nn::LSTMOptions(2, 2).num_layers(2).bidirectional(true)));
  EXPECT_TRUE(check_layer("LSTM(2, 2, num_layers=2, bidirectional=True)", weights_of(*m),
                          {randn64({3, 2, 2}), randn64({4, 2, 2}), randn64({4, 2, 2})}, [&](const In& x) {
                            auto [y, st] = m->forward(x[0], std::make_tuple(x[1], x[2]));
                            return flat_cat({y, std::get<0>(st), std::get<1>(st)});
                          }));
  auto p = in_float64(nn::LSTM(nn::LSTMOptions(2, 3).proj_size(2).batch_first(true)));
  EXPECT_TRUE(check_layer("LSTM(2, 3, proj_size=2, batch_first=True)", weights_of(*p), {randn64({2, 3, 2})},
                          [&](const In& x) {
                            auto [y, st] = p->forward(x[0]);
                            return flat_cat({y, std::get<0>(st), std::get<1>(st)});
                          }));
}

TEST_F(LayerGradgrad, GRU) {
  auto m = in_float64(nn::GRU(nn::GRUOptions(2, 2).num_layers(2).bidirectional(true)));
  EXPECT_TRUE(check_layer("GRU(2, 2, num_layers=2, bidirectional=True)", weights_of(*m), {randn64({3, 2, 2}), randn64({4, 2, 2})},
                          [&](const In& x) {
                            auto [y, h] = m->forward(x[0], x[1]);
                            return flat_cat({y, h});
                          }));
  auto u = in_float64(nn::GRU(nn::GRUOptions(2, 3).bias(false)));
  EXPECT_TRUE(check_layer("GRU(unbatched, bias=False)", weights_of(*u), {randn64({3, 2})}, [&](const In& x) {
    auto [y, h] = u->forward(x[0]);
    return flat_cat({y, h});
  }));
}

TEST_F(LayerGradgrad, RecurrentCells) {
  auto r = in_float64(nn::RNNCell(nn::RNNCellOptions(3, 2).nonlinearity(kReLU)));
  EXPECT_TRUE(check_layer("RNNCell(relu)", {&r->weight_ih, &r->weight_hh, &r->bias_ih, &r->bias_hh},
                          {randn64({2, 3}), randn64({2, 2})}, [&](const In& x) { return r->forward(x[0], x[1]); }));
  auto l = in_float64(nn::LSTMCell(3, 2));
  EXPECT_TRUE(check_layer("LSTMCell", {&l->weight_ih, &l->weight_hh, &l->bias_ih, &l->bias_hh},
                          {randn64({2, 3}), randn64({2, 2}), randn64({2, 2})}, [&](const In& x) {
                            auto [h, c] = l->forward(x[0], std::make_tuple(x[1], x[2]));
                            return flat_cat({h, c});
                          }));
  auto g = in_float64(nn::GRUCell(3, 2));
  EXPECT_TRUE(check_layer("GRUCell", {&g->weight_ih, &g->weight_hh, &g->bias_ih, &g->bias_hh},
                          {randn64({3}), randn64({2})}, [&](const In& x) { return g->forward(x[0], x[1]); }));
}

}  // namespace
