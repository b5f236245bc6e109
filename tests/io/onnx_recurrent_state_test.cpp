// Recurrent layers exported with their states as graph inputs and outputs: nn::LSTM, nn::GRU and
// nn::RNN with h0 (and c0) fed by the caller and h_n (and c_n) returned, two layers and two
// directions, batch-first and time-major; onnxruntime runs each file on another batch and length
// than the example's (the batch named in dynamic_axes) and gives cohort's output and final states.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/generator.h"
#include "cohort/io/onnx.h"
#include "cohort/nn/rnn.h"
#include "cohort/ops/creation.h"
#include "io/io_test_util.h"
#include "io/onnx_test_util.h"
#include "support/error_of.h"

namespace cohort::testing {
namespace {

using ::testing::HasSubstr;

class OnnxRecurrentState : public ScratchDir {
 protected:
  // `run(x, states)` is the layer's forward: {y, final states...}. Exported with example [2, 4]
  // sequences, checked on 3 sequences of 6 steps.
  void check(const std::string& name, nn::Module& layer, bool batch_first, int64_t num_states, int64_t LD,
             const io::MultiForward& run) {
    SCOPED_TRACE(name);
    layer.eval();
    const int64_t H = 5;
    auto example = [&](int64_t N, int64_t T) {
      std::vector<Tensor> in{batch_first ? randn({N, T, 3}) : randn({T, N, 3})};
      for (int64_t s = 0; s < num_states; ++s) in.push_back(randn({LD, N, H}));
      return in;
    };
    std::vector<std::string> in_names{"x", "h0"}, out_names{"y", "h_n"};
    if (num_states == 2) in_names.push_back("c0"), out_names.push_back("c_n");
    const int64_t batch_dim = batch_first ? 0 : 1;
    auto options = io::OnnxExportOptions().input_names(in_names).output_names(out_names);
    for (const char* port : {"x", "y"}) options.dynamic_axes(port, {{batch_dim, "N"}, {1 - batch_dim, "T"}});
    for (int64_t s = 0; s < num_states; ++s)
      options.dynamic_axes(in_names[1 + s], {{1, "N"}}).dynamic_axes(out_names[1 + s], {{1, "N"}});
    const fs::path file = path(name + ".onnx");
    io::export_onnx(layer, run, example(2, 4), file, options);

    const io::OnnxSummary s = io::read_onnx_summary(file);
    ASSERT_EQ(s.inputs.size(), in_names.size());
    ASSERT_EQ(s.outputs.size(), out_names.size());
    for (size_t k = 0; k < in_names.size(); ++k) EXPECT_EQ(s.inputs[k].name, in_names[k]);
    for (size_t k = 0; k < out_names.size(); ++k) EXPECT_EQ(s.outputs[k].name, out_names[k]);
    EXPECT_EQ(s.inputs[1].dims, (std::vector<std::string>{std::to_string(LD), "N", std::to_string(H)}));
    EXPECT_EQ(s.outputs[1].dims, (std::vector<std::string>{std::to_string(LD), "N", std::to_string(H)}));

    const std::vector<Tensor> in = example(3, 6);
    std::vector<Tensor> out;
    {
      NoGradGuard no_grad;
      out = run(in);
    }
    std::vector<NamedTensor> feeds, expected;
    for (int64_t k = 1; k <= num_states; ++k) {
      feeds.push_back({in_names[static_cast<size_t>(k)], in[static_cast<size_t>(k)]});
      expected.push_back({out_names[static_cast<size_t>(k)], out[static_cast<size_t>(k)]});
    }
    check_in_onnxruntime(dir_, file, in[0], out[0], {}, feeds, expected);
  }
};

TEST_F(OnnxRecurrentState, LstmTakesAndGivesItsStates) {
  manual_seed(21);
  for (bool batch_first : {true, false}) {
    nn::LSTM lstm(nn::LSTMOptions(3, 5).num_layers(2).bidirectional(true).batch_first(batch_first));
    check(batch_first ? "lstm_batch_first" : "lstm_time_major", *lstm, batch_first, 2, 4,
          [&](const std::vector<Tensor>& in) {
            auto [y, state] = lstm->forward(in[0], std::make_tuple(in[1], in[2]));
            return std::vector<Tensor>{y, std::get<0>(state), std::get<1>(state)};
          });
    if (IsSkipped()) return;
  }
}

TEST_F(OnnxRecurrentState, GruAndRnnTakeAndGiveTheirState) {
  manual_seed(22);
  nn::GRU gru(nn::GRUOptions(3, 5).num_layers(2).bidirectional(true).batch_first(true));
  check("gru", *gru, true, 1, 4, [&](const std::vector<Tensor>& in) {
    auto [y, h] = gru->forward(in[0], in[1]);
    return std::vector<Tensor>{y, h};
  });
  if (IsSkipped()) return;
  nn::RNN rnn(nn::RNNOptions(3, 5).num_layers(2).nonlinearity(kReLU));
  check("rnn_relu", *rnn, false, 1, 2, [&](const std::vector<Tensor>& in) {
    auto [y, h] = rnn->forward(in[0], in[1]);
    return std::vector<Tensor>{y, h};
  });
}

// Without the final states among the outputs, the file has no node for them (they are pruned), and
// a one-layer LSTM's state is the node's own output.
TEST_F(OnnxRecurrentState, UnreturnedStatesLeaveNoNodes) {
  nn::LSTM lstm(nn::LSTMOptions(3, 5).num_layers(2));
  lstm->eval();
  auto forward = [&](const Tensor& x) { return std::get<0>(lstm->forward(x)); };
  const std::string bytes = io::export_onnx_bytes(*lstm, forward, randn({4, 2, 3}));
  const io::OnnxSummary s = io::read_onnx_summary(bytes);
  EXPECT_THAT(s.ops, ::testing::Not(::testing::Contains("Concat"))) << ::testing::PrintToString(s.ops);
  EXPECT_EQ(s.outputs.size(), 1u);
}

TEST_F(OnnxRecurrentState, PortNamesAreChecked) {
  nn::GRU gru(nn::GRUOptions(3, 5));
  gru->eval();
  auto run = [&](const std::vector<Tensor>& in) {
    auto [y, h] = gru->forward(in[0], in[1]);
    return std::vector<Tensor>{y, h};
  };
  const std::vector<Tensor> in{randn({4, 2, 3}), randn({1, 2, 5})};
  EXPECT_THAT(error_of([&] { io::export_onnx_bytes(*gru, run, in, io::OnnxExportOptions().input_names({"x"})); }),
              HasSubstr("input_names has 1 names for 2 inputs"));
  EXPECT_THAT(error_of([&] {
                io::export_onnx_bytes(*gru, run, in,
                                      io::OnnxExportOptions().input_names({"x", "y"}).output_names({"y", "h"}));
              }),
              HasSubstr("the name 'y' is given to two inputs or outputs"));
  EXPECT_THAT(error_of([&] {
                io::export_onnx_bytes(*gru, run, in, io::OnnxExportOptions().dynamic_axes("h0", {{1, "N"}}));
              }),
              HasSubstr("dynamic_axes names 'h0', which is no input or output of the graph (they are 'input', "
                        "'input_1', 'output', 'output_1')"));
  EXPECT_THAT(error_of([&] {
                io::export_onnx_bytes(*gru, run, in, io::OnnxExportOptions().dynamic_axes("input_1", {{3, "N"}}));
              }),
              HasSubstr("dynamic_axes of 'input_1' names dimension 3, but 'input_1' has shape [1, 2, 5]"));
  EXPECT_THAT(error_of([&] { io::export_onnx_bytes(*gru, run, {}); }), HasSubstr("no example input"));
  EXPECT_THAT(error_of([&] {
                io::export_onnx_bytes(*gru, run, in, io::OnnxExportOptions().output_names({"output", "onnx_W_l0"}));
              }),
              HasSubstr("the name 'onnx_W_l0' is both an input or output of the graph and a parameter"));
}

}  // namespace
}  // namespace cohort::testing
