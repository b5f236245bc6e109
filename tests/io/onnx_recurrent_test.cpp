// nn::GRU and nn::RNN (tanh, relu) as ONNX's GRU and RNN operators, checked against cohort's forward by
// the numpy evaluator of the operator equations (check_onnx.py --numpy) and by onnxruntime: gate orders,
// two directions, two layers, initial states, no bias, batch-first and time-major inputs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "cohort/autograd/grad_mode.h"
#include "cohort/autograd/trace.h"
#include "cohort/core/generator.h"
#include "cohort/io/onnx.h"
#include "cohort/nn/linear.h"
#include "cohort/nn/rnn.h"
#include "cohort/ops/creation.h"
#include "io/io_test_util.h"
#include "io/onnx_test_util.h"
#include "support/error_of.h"
#include "support/paths.h"
#include "support/subprocess.h"

namespace cohort::testing {
namespace {

using ::testing::HasSubstr;

struct Variant {
  std::string name;
  bool gru = true, relu = false, bias = true, batch_first = true, bidirectional = false, initial_state = false;
  int64_t layers = 1;
};

void PrintTo(const Variant& v, std::ostream* os) { *os << v.name; }

class OnnxRecurrent : public ScratchDir, public ::testing::WithParamInterface<Variant> {
 protected:
  template <class Layer>
  void check(Layer& layer) {
    const Variant& v = GetParam();
    layer->eval();
    const int64_t D = v.bidirectional ? 2 : 1, N = 2, T = 4;
    const Tensor h0 = v.initial_state ? randn({v.layers * D, N, 5}) : Tensor();
    auto forward = [&](const Tensor& x) { return std::get<0>(layer->forward(x, h0)); };
    auto options = io::OnnxExportOptions();
    // A constant initial state fixes the batch; time-major inputs have no dynamic dimension to name.
    if (v.initial_state || !v.batch_first) options.dynamic_batch(false);
    if (!v.initial_state && v.batch_first) options.dynamic_sequence(true);
    const fs::path file = path(v.name + ".onnx");
    const Tensor example = v.batch_first ? randn({N, T, 3}) : randn({T, N, 3});
    io::export_onnx(*layer, forward, example, file, options);
    const io::OnnxSummary s = io::read_onnx_summary(file);
    EXPECT_EQ(std::count(s.ops.begin(), s.ops.end(), v.gru ? "GRU" : "RNN"), v.layers) << ::testing::PrintToString(s.ops);
    // Dynamic dimensions are run with other sizes than the example's.
    const bool dynamic = !v.initial_state && v.batch_first;
    const Tensor x = dynamic ? randn({3, 6, 3}) : example;
    Tensor y;
    {
      NoGradGuard no_grad;
      y = std::get<0>(layer->forward(x, h0));
    }
    const Finished probe = run_process({"/usr/bin/python3", "-c", "import onnx, cv2"}, dir_, "probe");
    if (probe.exit_code == 0) {
      io::save_npy(path("x.npy"), x);
      io::save_npy(path("y.npy"), y);
      const Finished numpy = run_process({"/usr/bin/python3", cohort::testing::fixtures_dir() + "/check_onnx.py",
                                          file.string(), path("x.npy").string(), path("y.npy").string(), "--numpy",
                                          "--opencv-may-refuse"},
                                         dir_, "check", std::chrono::seconds(300));
      EXPECT_EQ(numpy.exit_code, 0) << numpy.out << numpy.err;
      EXPECT_THAT(numpy.out, HasSubstr("onnx_numpy (float64)"));
      std::cout << numpy.out;
    } else {
      std::cout << "no numpy check: /usr/bin/python3 lacks onnx or cv2\n";
    }
    check_in_onnxruntime(dir_, file, x, y);
  }
};

TEST_P(OnnxRecurrent, AgreesWithCohortsForward) {
  const Variant& v = GetParam();
  manual_seed(9);
  if (v.gru) {
    nn::GRU layer(nn::GRUOptions(3, 5).num_layers(v.layers).bias(v.bias).batch_first(v.batch_first)
                      .bidirectional(v.bidirectional));
    check(layer);
  } else {
    auto options = nn::RNNOptions(3, 5).num_layers(v.layers).bias(v.bias).batch_first(v.batch_first)
                       .bidirectional(v.bidirectional);
    if (v.relu) options.nonlinearity(kReLU);
    nn::RNN layer(options);
    check(layer);
  }
}

Variant variant(std::string name, bool gru) {
  Variant v;
  v.name = std::move(name);
  v.gru = gru;
  return v;
}

std::vector<Variant> variants() {
  std::vector<Variant> out;
  for (bool gru : {true, false}) {
    for (bool relu : gru ? std::vector<bool>{false} : std::vector<bool>{false, true}) {
      const std::string kind = gru ? "gru" : relu ? "rnn_relu" : "rnn_tanh";
      Variant one = variant(kind + "_one_layer", gru);
      Variant deep = variant(kind + "_two_layers_bidirectional", gru);
      deep.layers = 2, deep.bidirectional = true;
      Variant state = variant(kind + "_time_major_initial_state", gru);
      state.layers = 2, state.bidirectional = true, state.batch_first = false, state.initial_state = true;
      Variant nobias = variant(kind + "_no_bias", gru);
      nobias.bias = false, nobias.initial_state = true;
      for (Variant* v : {&one, &deep, &state, &nobias}) {
        v->relu = relu;
        out.push_back(*v);
      }
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(OnnxGruRnn, OnnxRecurrent, ::testing::ValuesIn(variants()),
                         [](const ::testing::TestParamInfo<Variant>& info) { return info.param.name; });

// An op that reports itself but has no mapping is refused naming the op and the module whose
// parameter it reads (here a made-up op, reported as a layer of a model would report it).
class OnnxRefusal : public ScratchDir {};

TEST_F(OnnxRefusal, NamesTheOpAndItsModule) {
  struct Net : nn::Module {
    Net() { encoder = register_module("encoder", nn::Linear(3, 4)); }
    nn::Linear encoder{nullptr};
  };
  auto net = std::make_shared<Net>();
  auto forward = [&](const Tensor& x) {
    trace::OpScope scope("fancy_op");
    Tensor y = net->encoder(x);
    if (scope) scope.record({x, net->encoder->weight}, y);
    return y;
  };
  const std::string error = error_of([&] { io::export_onnx(*net, forward, randn({2, 3}), path("f.onnx")); });
  EXPECT_THAT(error, HasSubstr("the forward ran fancy_op in module encoder (its weight), which has no ONNX mapping"))
      << error;
  EXPECT_FALSE(fs::exists(path("f.onnx")));
}

}  // namespace
}  // namespace cohort::testing
