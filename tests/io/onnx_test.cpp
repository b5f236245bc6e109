// io::export_onnx: every zoo model and a module of the other exported ops, checked by Debian's
// python3-onnx (checker, reference evaluator when present) and OpenCV's dnn against cohort's output
// (tests/fixtures/check_onnx.py); the errors; the protobuf reader on broken bytes.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <random>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/generator.h"
#include "cohort/data/transforms.h"
#include "cohort/io/npy.h"
#include "cohort/io/onnx.h"
#include "cohort/models/model.h"
#include "cohort/nn/activation.h"
#include "cohort/nn/attention.h"
#include "cohort/nn/batchnorm.h"
#include "cohort/nn/conv.h"
#include "cohort/nn/linear.h"
#include "cohort/nn/rnn.h"
#include "cohort/ops/activation.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/dropout.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/pooling.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"
#include "io/io_test_util.h"
#include "io/onnx_test_util.h"
#include "support/error_of.h"
#include "support/error_of.h"
#include "support/paths.h"
#include "support/subprocess.h"

namespace cohort::testing {
namespace {

using ::testing::HasSubstr;

class Onnx : public ScratchDir {
 protected:
  // Runs check_onnx.py on `model` with input x; cohort's output is `expected`. Skips when
  // /usr/bin/python3 lacks onnx or cv2.
  void check_in_other_engines(const fs::path& model, const Tensor& x, const Tensor& expected,
                              const std::vector<std::string>& flags = {}) {
    const Finished probe =
        run_process({"/usr/bin/python3", "-c", "import onnx, cv2"}, dir_, "probe", std::chrono::seconds(120));
    if (probe.exit_code != 0)
      GTEST_SKIP() << "/usr/bin/python3 lacks onnx or cv2 (scripts/install-deps.sh --oracle installs python3-onnx "
                      "and python3-opencv): "
                   << probe.err;
    io::save_npy(path("x.npy"), x);
    io::save_npy(path("expected.npy"), expected);
    std::vector<std::string> args{"/usr/bin/python3", cohort::testing::fixtures_dir() + "/check_onnx.py",
                                  model.string(), path("x.npy").string(), path("expected.npy").string()};
    args.insert(args.end(), flags.begin(), flags.end());
    const Finished check = run_process(args, dir_, "check", std::chrono::seconds(300));
    EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
    EXPECT_THAT(check.out, HasSubstr("\"engine\": \"opencv"));
    std::cout << model.filename().string() << ":\n" << check.out;
  }
};

TEST_F(Onnx, EveryZooModelRunsInOtherEngines) {
  for (const std::string& name : models::names()) {
    SCOPED_TRACE(name);
    manual_seed(7);
    auto net = models::create(name);
    if (name.starts_with("char-")) continue;  // CharLstmRunsForAnyBatchAndLength, CharTransformerRuns...
    randomize_batch_norms(*net);
    net->eval();
    const fs::path file = path(name + ".onnx");
    io::export_onnx(net, randn({2, 3, 32, 32}), file);

    const io::OnnxSummary s = io::read_onnx_summary(file);
    EXPECT_EQ(s.opset, 13);
    EXPECT_EQ(s.ir_version, 7);
    EXPECT_EQ(s.producer, "cohort");
    ASSERT_EQ(s.inputs.size(), 1u);
    EXPECT_EQ(s.inputs[0].name, "input");
    EXPECT_EQ(s.inputs[0].dims, (std::vector<std::string>{"N", "3", "32", "32"}));
    ASSERT_EQ(s.outputs.size(), 1u);
    EXPECT_EQ(s.outputs[0].dims, (std::vector<std::string>{"N", "10"}));
    // Every parameter is an initializer under its own name, with its shape.
    const auto state = net->state_dict();
    for (const auto& item : net->named_parameters()) {
      auto it = std::find_if(s.initializers.begin(), s.initializers.end(),
                             [&](const auto& init) { return init.name == item.key(); });
      ASSERT_NE(it, s.initializers.end()) << item.key();
      EXPECT_EQ(it->dims, item.value().sizes().vec()) << item.key();
      EXPECT_EQ(it->data_type, 1) << item.key();
    }

    // Another batch size than the example's: the batch dimension is dynamic.
    Tensor x = randn({3, 3, 32, 32});
    Tensor y;
    {
      NoGradGuard no_grad;
      y = net->forward(x);
    }
    check_in_other_engines(file, x, y);
    if (::testing::Test::IsSkipped()) return;
  }
}

// The language model: ids [N, T] -> Gather -> ONNX LSTM per layer -> Gemm, logits [N * T, V] as
// cohort's forward gives them. Debian's OpenCV 4.6 cannot run it (Gather with non-constant indices,
// LSTM with dynamic shapes), so tests/fixtures/onnx_numpy.py evaluates it from the ONNX spec.
TEST_F(Onnx, CharLstmRunsForAnyBatchAndLength) {
  manual_seed(3);
  auto net = models::create("char-lstm", models::ModelOptions().num_classes(11));
  net->eval();
  const fs::path file = path("char-lstm.onnx");
  io::export_onnx(net, tensor(std::vector<int64_t>{1, 2, 3, 4, 5, 6}).view({2, 3}), file,
                  io::OnnxExportOptions().dynamic_sequence(true));
  const io::OnnxSummary s = io::read_onnx_summary(file);
  EXPECT_EQ(s.ops, (std::vector<std::string>{"Gather", "Transpose", "LSTM", "Reshape", "LSTM", "Reshape", "Transpose",
                                             "Reshape", "Gemm"}));
  ASSERT_EQ(s.inputs.size(), 1u);
  EXPECT_EQ(s.inputs[0].elem_type, 7);
  EXPECT_EQ(s.inputs[0].dims, (std::vector<std::string>{"N", "T"}));
  EXPECT_EQ(s.outputs[0].dims, (std::vector<std::string>{"N*T", "11"}));
  for (const char* name : {"embedding.weight", "lstm.onnx_W_l0", "lstm.onnx_R_l1", "lstm.onnx_B_l1", "fc.weight"})
    EXPECT_TRUE(std::any_of(s.initializers.begin(), s.initializers.end(),
                            [&](const auto& init) { return init.name == name; }))
        << name;
  // Another batch and length than the example's.
  Tensor x = randint(0, 11, {3, 5});
  Tensor y;
  {
    NoGradGuard no_grad;
    y = net->forward(x);
  }
  check_in_other_engines(file, x, y, {"--argmax", "--numpy", "--opencv-may-refuse"});
}

// The transformer language model for a fixed length (its positions and causal mask are constants of
// the trace): Gather, layer norms (decomposed for opset 13, LayerNormalization in 17), attention as
// MatMul/Softmax, GELU, Gemm.
TEST_F(Onnx, CharTransformerRunsForAFixedLength) {
  manual_seed(5);
  auto net = models::create("char-transformer", models::ModelOptions().num_classes(11).image_size(8));
  net->eval();
  Tensor x = randint(0, 11, {3, 8});
  Tensor y;
  {
    NoGradGuard no_grad;
    y = net->forward(x);
  }
  for (int64_t opset : {13, 17}) {
    SCOPED_TRACE(opset);
    const fs::path file = path("char-transformer-" + std::to_string(opset) + ".onnx");
    io::export_onnx(net, randint(0, 11, {2, 8}), file, io::OnnxExportOptions().opset(opset));
    const io::OnnxSummary s = io::read_onnx_summary(file);
    EXPECT_EQ(s.inputs.at(0).dims, (std::vector<std::string>{"N", "8"}));
    EXPECT_EQ(s.outputs.at(0).dims, (std::vector<std::string>{"N*8", "11"}));
    EXPECT_THAT(s.ops, ::testing::Contains(opset == 17 ? "LayerNormalization" : "ReduceMean"));
    check_in_other_engines(file, x, y, {"--argmax", "--numpy", "--opencv-may-refuse"});
  }
  // The attention's other refusals name the op and why.
  nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(8, 2).dropout(0.1));
  const std::string error = testing::error_of([&] {
    io::export_onnx(*mha, [&](const Tensor& q) { return std::get<0>(mha->forward(q, q, q)); }, randn({5, 2, 8}),
                    path("mha.onnx"));
  });
  EXPECT_THAT(error, HasSubstr("multihead_attention: cannot be traced in training mode with dropout")) << error;
}

// An LSTM's other forms: time-major, two directions, initial states (constants here, sliced per
// layer), no bias; each layer's gates regrouped into ONNX's order.
TEST_F(Onnx, LstmVariantsMapToOnnxLstm) {
  manual_seed(4);
  for (bool bias : {true, false}) {
    SCOPED_TRACE(bias);
    nn::LSTM lstm(nn::LSTMOptions(4, 5).num_layers(2).bidirectional(true).bias(bias));
    lstm->eval();
    const Tensor h0 = randn({4, 2, 5}), c0 = randn({4, 2, 5});
    auto forward = [&](const Tensor& x) { return std::get<0>(lstm->forward(x, std::make_tuple(h0, c0))); };
    const fs::path file = path(bias ? "lstm.onnx" : "lstm-nobias.onnx");
    const Tensor x = randn({6, 2, 4});  // [T, N, I]
    io::export_onnx(*lstm, forward, x, file, io::OnnxExportOptions().dynamic_batch(false));
    Tensor y;
    {
      NoGradGuard no_grad;
      y = forward(x);
    }
    check_in_other_engines(file, x, y, {"--numpy", "--opencv-may-refuse"});
    check_in_onnxruntime(dir_, file, x, y);
  }
}

TEST_F(Onnx, ModelOpsAreRecordedOnceEach) {
  manual_seed(1);
  auto net = models::create("lenet");
  net->eval();
  io::export_onnx(net, randn({2, 3, 32, 32}), path("lenet.onnx"));
  // linear's addmm and t(), max_pool2d's indices, flatten's reshape and view are not separate nodes.
  EXPECT_EQ(io::read_onnx_summary(path("lenet.onnx")).ops,
            (std::vector<std::string>{"Conv", "Relu", "MaxPool", "Conv", "Relu", "MaxPool", "Reshape", "Gemm", "Relu",
                                      "Gemm", "Relu", "Gemm"}));
}

// The other exported ops, through a module of its own.
struct Mixed : nn::Module {
  Mixed() {
    conv = register_module("conv", nn::Conv2d(nn::Conv2dOptions(3, 4, 3).padding(1).stride(1)));
    bn = register_module("bn", nn::BatchNorm2d(nn::BatchNormOptions(4).affine(false)));
    fc = register_module("fc", nn::Linear(8, 5));
  }
  Tensor forward(const Tensor& x) {
    Tensor a = bn(conv(x));                                        // [N, 4, 8, 8]
    Tensor b = avg_pool2d(a, 2, 2, 0, false, true);                // [N, 4, 4, 4]
    Tensor c = adaptive_avg_pool2d(leaky_relu(a, 0.1), {4, 4});    // [N, 4, 4, 4]
    Tensor d = cat({gelu(b), silu(c) - b * 0.5}, 1);               // [N, 8, 4, 4]
    d = std::get<0>(adaptive_max_pool2d(d, {2, 2}));               // [N, 8, 2, 2]
    d = d.permute({0, 2, 3, 1});                                   // [N, 2, 2, 8]
    Tensor e = fc(d);                                              // [N, 2, 2, 5] (linear on 4-d)
    e = dropout(e, 0.5, /*train=*/false).sigmoid() / 3 + tanh(e).sub(e, 2);
    e = e.reshape({e.size(0), 4, 5}).transpose(1, 2);              // [N, 5, 4]
    Tensor f = softmax(e, 1) + log_softmax(e, 2).exp().unsqueeze(1).squeeze(1);
    return f.flatten(1);
  }
  nn::Conv2d conv{nullptr};
  nn::BatchNorm2d bn{nullptr};
  nn::Linear fc{nullptr};
};

TEST_F(Onnx, OtherOpsRunInOtherEngines) {
  manual_seed(3);
  auto net = std::make_shared<Mixed>();
  randomize_batch_norms(*net);
  net->eval();
  io::export_onnx(net, randn({2, 3, 8, 8}), path("mixed.onnx"));
  const auto s = io::read_onnx_summary(path("mixed.onnx"));
  EXPECT_EQ(s.outputs[0].dims, (std::vector<std::string>{"N", "20"}));
  Tensor x = randn({4, 3, 8, 8});
  Tensor y;
  {
    NoGradGuard no_grad;
    y = net->forward(x);
  }
  check_in_other_engines(path("mixed.onnx"), x, y);
}

TEST_F(Onnx, InPlaceOpsGiveTheTensorItsNewValue) {
  manual_seed(4);
  nn::Linear fc(6, 6);
  auto forward = [&](const Tensor& x) {
    Tensor y = fc(x);
    y.relu_();
    y.add_(x, 2.0);
    return y * 1.5;
  };
  io::export_onnx(*fc, forward, randn({2, 6}), path("inplace.onnx"));
  EXPECT_EQ(io::read_onnx_summary(path("inplace.onnx")).ops,
            (std::vector<std::string>{"Gemm", "Relu", "Mul", "Add", "Mul"}));
  Tensor x = randn({5, 6});
  Tensor y;
  {
    NoGradGuard no_grad;
    y = forward(x);
  }
  check_in_other_engines(path("inplace.onnx"), x, y);
}

TEST_F(Onnx, TensorsOutsideTheModuleAreConstants) {
  nn::Linear fc(3, 2);
  Tensor shift = randn({2}).requires_grad_(true);  // a leaf the forward reads, not a parameter of fc
  io::export_onnx(*fc, [&](const Tensor& x) { return fc(x) + shift; }, randn({2, 3}), path("c.onnx"));
  const auto s = io::read_onnx_summary(path("c.onnx"));
  EXPECT_EQ(s.ops, (std::vector<std::string>{"Gemm", "Add"}));
  std::vector<std::string> names;
  for (const auto& init : s.initializers) names.push_back(init.name);
  EXPECT_EQ(names, (std::vector<std::string>{"weight", "bias", "const_0"}));
}

TEST_F(Onnx, InputNormalizationIsTheGraphsFirstNodesAndMetadataRoundTrips) {
  // Per channel of an image batch: the file takes raw pixels, cohort's model the normalised ones.
  nn::Conv2d conv(nn::Conv2dOptions(3, 4, 3));
  const std::vector<double> mean{0.485, 0.456, 0.406}, stdev{0.229, 0.224, 0.225};
  const auto options = io::OnnxExportOptions()
                           .normalize_input(mean, stdev)
                           .metadata("classes", "[\"cat\",\"dog\"]")
                           .metadata("input_layout", "NCHW float32, pixels in [0, 1]");
  io::export_onnx(conv, rand({2, 3, 8, 8}), path("norm.onnx"), options);
  const auto s = io::read_onnx_summary(path("norm.onnx"));
  EXPECT_EQ(s.ops, (std::vector<std::string>{"Sub", "Div", "Conv"}));
  std::vector<std::string> keys;
  for (const auto& [key, value] : s.metadata) keys.push_back(key);
  EXPECT_EQ(keys, (std::vector<std::string>{"input_normalization", "classes", "input_layout"}));
  EXPECT_EQ(*s.find_metadata("classes"), "[\"cat\",\"dog\"]");
  EXPECT_EQ(*s.find_metadata("input_layout"), "NCHW float32, pixels in [0, 1]");
  EXPECT_EQ(*s.find_metadata("input_normalization"),
            "{\"inside_graph\": true, \"formula\": \"(input - mean) / std\", \"dim\": 1, \"mean\": [0.485, 0.456, "
            "0.406], \"std\": [0.229, 0.224, 0.225]}");
  EXPECT_EQ(s.find_metadata("absent"), nullptr);
  for (const auto& init : s.initializers)
    if (init.name == "input_mean" || init.name == "input_std")
      EXPECT_EQ(init.dims, (std::vector<int64_t>{3, 1, 1})) << init.name;
  Tensor x = rand({3, 3, 8, 8});
  Tensor y;
  {
    NoGradGuard no_grad;
    y = conv(data::transforms::Normalize<>(mean, stdev)(x));
  }
  check_in_other_engines(path("norm.onnx"), x, y);

  // Per feature of a table's rows [N, F].
  nn::Linear fc(3, 2);
  io::export_onnx(fc, randn({2, 3}), path("rows.onnx"), io::OnnxExportOptions().normalize_input({1000, 50, 0}, {300, 2, 1}));
  const auto rows = io::read_onnx_summary(path("rows.onnx"));
  EXPECT_EQ(rows.ops, (std::vector<std::string>{"Sub", "Div", "Gemm"}));
  Tensor r = randn({4, 3}) * tensor({300.0, 2.0, 1.0}).to(kFloat32) + tensor({1000.0, 50.0, 0.0}).to(kFloat32);
  {
    NoGradGuard no_grad;
    y = fc((r - tensor({1000.0, 50.0, 0.0}).to(kFloat32)) / tensor({300.0, 2.0, 1.0}).to(kFloat32));
  }
  check_in_other_engines(path("rows.onnx"), r, y);
}

TEST_F(Onnx, NormalizationAndMetadataErrorsSayWhatWasExpected) {
  nn::Linear fc(3, 2);
  const fs::path file = path("bad.onnx");
  EXPECT_THAT(error_of([&] {
                io::export_onnx(fc, randn({2, 3}), file, io::OnnxExportOptions().normalize_input({0, 0}, {1, 1}));
              }),
              HasSubstr("export_onnx: " + file.string() + ": normalize_input has 2 means and stds for dim 1 of the "
                        "input, but the example input has shape [2, 3]"));
  EXPECT_THAT(error_of([&] {
                io::export_onnx(fc, randn({2, 3}), file, io::OnnxExportOptions().normalize_input({0, 0, 0}, {1, 0, 1}));
              }),
              HasSubstr("normalize_input: std[1] must be positive and mean[1] finite, got mean 0 and std 0"));
  EXPECT_THAT(error_of([&] {
                io::export_onnx(fc, randn({2, 3}), file, io::OnnxExportOptions().normalize_input({0, 0, 0}, {1, 1}));
              }),
              HasSubstr("normalize_input needs as many stds as means, got 3 means and 2 stds"));
  EXPECT_THAT(error_of([&] {
                io::export_onnx(fc, randn({2, 3}), file, io::OnnxExportOptions().metadata("a", "1").metadata("a", "2"));
              }),
              HasSubstr("the metadata key \"a\" is given twice"));
  EXPECT_THAT(error_of([&] {
                io::export_onnx(fc, randn({2, 3}), file,
                                io::OnnxExportOptions().normalize_input({0, 0, 0}, {1, 1, 1}).metadata("input_normalization", "x"));
              }),
              HasSubstr("the metadata key \"input_normalization\" is given twice (the exporter writes it for "
                        "normalize_input)"));
  EXPECT_THAT(error_of([&] { io::export_onnx(fc, randn({2, 3}), file, io::OnnxExportOptions().metadata("", "v")); }),
              HasSubstr("a metadata key is empty"));
  EXPECT_TRUE(others("").empty());
}

TEST_F(Onnx, ErrorsNameTheOpAndTheFile) {
  auto net = models::create("resnet18");
  const fs::path file = path("r.onnx");
  // Training mode: batch norm would use the batch's statistics.
  EXPECT_THAT(error_of([&] { io::export_onnx(net, randn({2, 3, 32, 32}), file); }),
              HasSubstr("export_onnx: " + file.string() + ": batch_norm: cannot be traced in training mode"));
  EXPECT_FALSE(fs::exists(file));

  nn::Linear fc(4, 3);
  // An op the exporter has no mapping for, caught by its autograd node.
  EXPECT_THAT(error_of([&] { io::export_onnx(*fc, [&](const Tensor& x) { return fc(x).cumsum(1); }, randn({2, 4}), file); }),
              HasSubstr("the forward ran Cumsum (autograd node CumsumBackward0), which has no ONNX mapping"));
  // An op that reports itself but has no mapping.
  EXPECT_THAT(error_of([&] { io::export_onnx(*fc, [&](const Tensor& x) { return fc(x).sign(); }, randn({2, 4}), file); }),
              HasSubstr("the forward ran sign, which has no ONNX mapping"));
  // dropout in training mode.
  EXPECT_THAT(error_of([&] {
                io::export_onnx(*fc, [&](const Tensor& x) { return dropout(fc(x), 0.5, true); }, randn({2, 4}), file);
              }),
              HasSubstr("dropout: cannot be traced in training mode"));
  // An output that does not depend on the input.
  EXPECT_THAT(error_of([&] { io::export_onnx(*fc, [&](const Tensor&) { return zeros({2, 3}); }, randn({2, 4}), file); }),
              HasSubstr("does not come from the input"));
  EXPECT_THAT(error_of([&] { io::export_onnx(fc, ones({2, 4}, TensorOptions(kInt32)), file); }),
              HasSubstr("must be float32, float64 or int64 (ids), got int32"));
  // int64 ids are an input (an embedding's), but neither normalised nor fed to a float op.
  EXPECT_THAT(error_of([&] {
                io::export_onnx(fc, ones({2, 4}, TensorOptions(kInt64)), file,
                                io::OnnxExportOptions().normalize_input({0, 0, 0, 0}, {1, 1, 1, 1}));
              }),
              HasSubstr("normalize_input needs a floating-point input, got int64 ids"));
  EXPECT_THAT(error_of([&] { io::export_onnx(fc, ones({2, 4}, TensorOptions(kInt64)), file); }),
              HasSubstr("mm: expected both operands to have the same dtype"));
  // A sequence dimension the exporter could not tell from the batch's.
  EXPECT_THAT(error_of([&] {
                io::export_onnx(fc, randn({4, 4}), file, io::OnnxExportOptions().dynamic_sequence(true));
              }),
              HasSubstr("dynamic_sequence needs an example input [N, T, ...] with T >= 2 and N != T"));
  EXPECT_THAT(error_of([&] { io::export_onnx(fc, randn({2, 4}), file, io::OnnxExportOptions().opset(9)); }),
              HasSubstr("opset must be 13 to 17, got 9"));
  EXPECT_TRUE(others("").empty());
  // Tracing leaves nothing behind: the ops run normally afterwards.
  EXPECT_NO_THROW(fc(randn({2, 4})).cumsum(1));
}

TEST_F(Onnx, SummaryRefusesBrokenBytes) {
  nn::Linear fc(3, 2);
  const std::string good = io::export_onnx_bytes(*fc, [&](const Tensor& x) { return fc(x); }, randn({2, 3}));
  EXPECT_NO_THROW(io::read_onnx_summary(good));
  // Every proper prefix either parses (a prefix can end between fields) or throws a cohort::Error.
  for (size_t n = 0; n < good.size(); ++n) {
    try {
      io::read_onnx_summary(good.substr(0, n), "cut");
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("read_onnx_summary: cut: ")) << n;
    }
  }
  // Random byte changes: parse or throw a cohort::Error, never anything else (fuzz/fuzz_onnx.cpp's contract).
  std::mt19937 rng(5);
  for (int trial = 0; trial < 3000; ++trial) {
    std::string bytes = good;
    for (int k = 0; k < 1 + trial % 4; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    try {
      io::read_onnx_summary(bytes, "mutated");
    } catch (const Error&) {
    }
  }
  EXPECT_THAT(error_of([&] { io::read_onnx_summary(std::string("\x0b\x01", 2), "g"); }),
              HasSubstr("wire type 3"));
  EXPECT_THAT(error_of([&] { io::read_onnx_summary(std::string("\x3a\x7f", 2), "l"); }),
              HasSubstr("claims 127 bytes but 0 are left"));
  EXPECT_THAT(error_of([&] { io::read_onnx_summary(std::string("\x08\x01", 2), "n"); }), HasSubstr("no graph"));
}

}  // namespace
}  // namespace cohort::testing
