// What the ONNX tests share: random batch-norm statistics (so that each term of the exported batch norm
// shows), and a run of an exported file in onnxruntime, from the venv that scripts/test_peers_venv.sh
// finds or makes, against cohort's outputs (tests/fixtures/check_onnxruntime.py).
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "cohort/autograd/grad_mode.h"
#include "cohort/io/npy.h"
#include "cohort/nn/module.h"
#include "cohort/ops/creation.h"
#include "support/paths.h"
#include "support/subprocess.h"
#include "support/test_peers.h"

namespace cohort::testing {

// Batch norms with their initial statistics (mean 0, var 1, weight 1, bias 0) are the identity;
// random ones make the export of each term visible.
inline void randomize_batch_norms(nn::Module& m) {
  NoGradGuard no_grad;
  for (const auto& item : m.named_buffers()) {
    const std::string& name = item.key();
    if (name.find("running_mean") != std::string::npos) item.value().copy_(randn(item.value().sizes()) * 0.1);
    if (name.find("running_var") != std::string::npos) item.value().copy_(rand(item.value().sizes()) + 0.5);
  }
  for (const auto& item : m.named_parameters()) {
    const std::string& name = item.key();
    const Tensor& p = item.value();
    if (p.dim() == 1 && name.find("bn") != std::string::npos)
      p.copy_(randn(p.sizes()) * 0.1 + (name.find("weight") != std::string::npos ? 1.0 : 0.0));
  }
}

// A named tensor fed to or expected from a graph besides "input" and the first output (a recurrent
// layer's initial and final states).
struct NamedTensor {
  std::string name;
  Tensor value;
};

// Runs `model` in onnxruntime on x (and `feeds`) and checks the first output against `expected` and
// each of `outputs` by name, to 1e-4 (check_onnxruntime.py's bound); `flags` go to the script
// (--argmax). Skips, naming the reason, where onnxruntime cannot be had.
inline void check_in_onnxruntime(const std::filesystem::path& dir, const std::filesystem::path& model,
                                 const Tensor& x, const Tensor& expected, const std::vector<std::string>& flags = {},
                                 const std::vector<NamedTensor>& feeds = {},
                                 const std::vector<NamedTensor>& outputs = {}) {
  const auto& [python, unavailable] = test_peers_python();
  if (python.empty()) GTEST_SKIP() << "no onnxruntime: " << unavailable;
  const std::string stem = model.stem().string();
  io::save_npy(dir / (stem + ".x.npy"), x);
  io::save_npy(dir / (stem + ".expected.npy"), expected);
  std::vector<std::string> args{python, cohort::testing::fixtures_dir() + "/check_onnxruntime.py", model.string(),
                                (dir / (stem + ".x.npy")).string(), (dir / (stem + ".expected.npy")).string()};
  args.insert(args.end(), flags.begin(), flags.end());
  auto add = [&](const char* flag, const NamedTensor& t) {
    const std::filesystem::path file = dir / (stem + "." + t.name + ".npy");
    io::save_npy(file, t.value);
    args.insert(args.end(), {flag, t.name + "=" + file.string()});
  };
  for (const NamedTensor& t : feeds) add("--state", t);
  for (const NamedTensor& t : outputs) add("--expect", t);
  const Finished check = run_process(args, dir, stem + ".onnxruntime", std::chrono::seconds(300));
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_THAT(check.out, ::testing::HasSubstr("\"engine\": \"onnxruntime"));
  std::cout << model.filename().string() << ":\n" << check.out;
}

// check_in_onnxruntime for a test that checks more than the file: where onnxruntime cannot be had
// it says why and leaves the test's other checks to count, rather than skipping the whole test.
inline void check_in_onnxruntime_if_available(const std::filesystem::path& dir, const std::filesystem::path& model,
                                              const Tensor& x, const Tensor& expected,
                                              const std::vector<std::string>& flags = {},
                                              const std::vector<NamedTensor>& feeds = {},
                                              const std::vector<NamedTensor>& outputs = {}) {
  if (const auto& [python, unavailable] = test_peers_python(); python.empty()) {
    std::cout << "not checked in onnxruntime: " << unavailable;
    return;
  }
  check_in_onnxruntime(dir, model, x, expected, flags, feeds, outputs);
}

}  // namespace cohort::testing
