// Every zoo model's exported file run by onnxruntime (from PyPI, in the venv of
// scripts/test_peers_venv.sh) on inputs cohort's forward also runs: outputs within 1e-4 and the same
// argmax. One test per model name, so that a failure names the model; skipped, with the reason,
// where onnxruntime cannot be installed.
#include <gtest/gtest.h>

#include <string>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/generator.h"
#include "cohort/io/onnx.h"
#include "cohort/models/model.h"
#include "cohort/ops/creation.h"
#include "io/io_test_util.h"
#include "io/onnx_test_util.h"

namespace cohort::testing {
namespace {

class OnnxRuntimeModel : public ScratchDir, public ::testing::WithParamInterface<std::string> {};

// The file cohort writes for the model, then onnxruntime against cohort's forward on another batch
// (and, for char-lstm, another length) than the example's: the dynamic dimensions are exercised.
TEST_P(OnnxRuntimeModel, AgreesWithCohortsForward) {
  const std::string& name = GetParam();
  manual_seed(11);
  struct Case {
    Tensor example, x;
    io::OnnxExportOptions options;
    std::string file;
  };
  std::vector<Case> cases;
  models::ModelOptions model_options;
  if (name == "char-lstm") {
    model_options.num_classes(11);
    cases.push_back({randint(0, 11, {2, 3}), randint(0, 11, {3, 5}), io::OnnxExportOptions().dynamic_sequence(true),
                     name});
  } else if (name == "char-transformer") {
    // Its positions and causal mask are constants of the trace: the length is the example's. Opset 13
    // decomposes layer norm, 17 has LayerNormalization.
    model_options.num_classes(11).image_size(8);
    for (int64_t opset : {13, 17})
      cases.push_back({randint(0, 11, {2, 8}), randint(0, 11, {3, 8}), io::OnnxExportOptions().opset(opset),
                       name + "-" + std::to_string(opset)});
  } else {
    cases.push_back({randn({2, 3, 32, 32}), randn({3, 3, 32, 32}), io::OnnxExportOptions(), name});
  }
  auto net = models::create(name, model_options);
  randomize_batch_norms(*net);
  net->eval();
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    const fs::path file = path(c.file + ".onnx");
    io::export_onnx(net, c.example, file, c.options);
    Tensor y;
    {
      NoGradGuard no_grad;
      y = net->forward(c.x);
    }
    check_in_onnxruntime(dir_, file, c.x, y, {"--argmax"});
    if (IsSkipped()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(OnnxRuntime, OnnxRuntimeModel, ::testing::ValuesIn(models::names()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string id = info.param;
                           for (char& ch : id)
                             if (ch == '-') ch = '_';
                           return id;
                         });

}  // namespace
}  // namespace cohort::testing
