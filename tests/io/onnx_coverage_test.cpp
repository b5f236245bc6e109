// The exporter against the op table: every row's op runs once under a tracer, and every op that
// reports itself is either mapped to ONNX or refused by export_onnx with an error naming it (never
// exported wrongly, never refused without a name). Where a row's op exports, onnxruntime runs the
// file (the row's float32 and int64 inputs as the graph's inputs, the others constants) and must give
// cohort's values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "cohort/autograd/grad_mode.h"
#include "cohort/autograd/trace.h"
#include "cohort/io/npy.h"
#include "cohort/io/onnx.h"
#include "cohort/nn/module.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "io/io_test_util.h"
#include "io/onnx_test_util.h"
#include "support/op_table.h"
#include "support/paths.h"
#include "support/subprocess.h"

namespace cohort::testing {
namespace {

// The names of the ops a call reports, without exporting anything.
class OpNames : public trace::Tracer {
 public:
  void record(trace::Record r) override { names.insert(r.op); }
  void untraced(const char*) override {}
  std::set<std::string> names;
};

class OnnxCoverage : public ScratchDir {};

TEST_F(OnnxCoverage, EveryTracedOpOfTheOpTableIsExportedOrRefusedByName) {
  const std::vector<std::string> listed = io::onnx_exported_ops();
  const std::set<std::string> exported(listed.begin(), listed.end());
  std::set<std::string> traced;
  std::map<std::string, std::string> refusals;  // traced op without a mapping -> the error naming it
  std::map<std::string, std::string> other_errors;  // -> a row's error that did not name it
  nlohmann::json manifest = nlohmann::json::array();
  nn::Module holder;  // the rows' ops read no module parameters
  for (const OpRow& row : op_table()) {
    SCOPED_TRACE(row.name);
    std::vector<Tensor> in = make_inputs(row, 0, kFloat32);
    OpNames names;
    try {
      trace::TracerGuard guard(names);
      NoGradGuard no_grad;
      row.op(in);
    } catch (const Error& e) {
      // An op called in a mode a trace cannot hold (batch norm in training) refuses while traced.
      EXPECT_THAT(e.what(), ::testing::HasSubstr("cannot be traced")) << e.what();
      continue;
    }
    if (names.names.empty()) continue;
    traced.insert(names.names.begin(), names.names.end());
    // The graph's inputs: the row's float and int64 tensors; a bool mask stays a constant.
    std::vector<size_t> ports;
    std::vector<Tensor> examples;
    for (size_t k = 0; k < in.size(); ++k) {
      if (in[k].is_floating_point() || in[k].dtype() == kInt64) {
        ports.push_back(k);
        examples.push_back(in[k]);
      }
    }
    if (examples.empty()) continue;
    auto forward = [&](const std::vector<Tensor>& xs) {
      std::vector<Tensor> args = in;
      for (size_t i = 0; i < ports.size(); ++i) args[ports[i]] = xs[i];
      return row.op(args);
    };
    const fs::path file = path(row.name + ".onnx");
    try {
      io::export_onnx(holder, forward, examples, file, io::OnnxExportOptions().dynamic_batch(false));
    } catch (const Error& e) {
      const std::string what = e.what();
      for (const std::string& op : names.names) {
        if (exported.count(op)) continue;
        const bool named = what.find("the forward ran " + op + ",") != std::string::npos ||
                           what.find(op + ": cannot be") != std::string::npos;
        if (named) {
          refusals.emplace(op, what);
        } else {
          other_errors.emplace(op, row.name + ": " + what);
        }
      }
      // A mapped op may still be refused for an input the mapping cannot represent (an unbatched
      // convolution, mixed dtypes, an adaptive pool whose output does not divide its input), or because the row's op also runs an op that reports nothing:
      // the message says which.
      EXPECT_THAT(what, ::testing::AnyOf(::testing::HasSubstr("which has no ONNX mapping"),
                                         ::testing::HasSubstr("cannot be exported"),
                                         ::testing::HasSubstr("cannot be traced"),
                                         ::testing::HasSubstr("cannot represent"),
                                         ::testing::HasSubstr("does not come from the inputs")))
          << what;
      continue;
    }
    std::vector<Tensor> expected;
    {
      NoGradGuard no_grad;
      expected = forward(examples);
    }
    nlohmann::json entry{{"model", file.string()}, {"inputs", nlohmann::json::object()},
                         {"outputs", nlohmann::json::object()}};
    for (size_t i = 0; i < examples.size(); ++i) {
      const std::string name = i == 0 ? "input" : "input_" + std::to_string(i);
      io::save_npy(path(row.name + "." + name + ".npy"), examples[i]);
      entry["inputs"][name] = path(row.name + "." + name + ".npy").string();
    }
    for (size_t i = 0; i < expected.size(); ++i) {
      const std::string name = i == 0 ? "output" : "output_" + std::to_string(i);
      io::save_npy(path(row.name + "." + name + ".npy"), expected[i].contiguous());
      entry["outputs"][name] = path(row.name + "." + name + ".npy").string();
    }
    manifest.push_back(entry);
  }
  // Traced ops that the table runs only inside other ops (logsumexp's isfinite, the masks of the
  // piecewise activations), exported alone.
  const std::map<std::string, std::function<Tensor(const Tensor&)>> inner{
      {"isfinite", [](const Tensor& x) { return isfinite(x); }},
      {"logical_and", [](const Tensor& x) { return logical_and(x, x); }},
      {"logical_or", [](const Tensor& x) { return logical_or(x, x); }}};
  for (const auto& [op, fn] : inner) {
    if (refusals.count(op) || exported.count(op)) continue;
    try {
      io::export_onnx_bytes(holder, fn, randn({2, 3}));
    } catch (const Error& e) {
      if (std::string(e.what()).find("the forward ran " + op + ",") != std::string::npos) refusals.emplace(op, e.what());
    }
  }
  for (const std::string& op : traced) {
    if (exported.count(op)) continue;
    EXPECT_TRUE(refusals.count(op)) << "the traced op " << op << " has no ONNX mapping and no row's export was "
                                    << "refused naming it; "
                                    << (other_errors.count(op) ? "row " + other_errors[op] : "no row's export failed");
  }
  std::cout << "traced ops in the op table: " << traced.size() << "; exported rows: " << manifest.size()
            << "; traced ops refused by name: " << refusals.size() << "\n";
  EXPECT_GT(manifest.size(), 20u);

  const auto& [python, unavailable] = test_peers_python();
  if (python.empty()) GTEST_SKIP() << "the exported rows are not run: no onnxruntime: " << unavailable;
  std::ofstream(path("manifest.json")) << manifest.dump(1);
  const Finished check = run_process({python, cohort::testing::fixtures_dir() + "/check_onnxruntime_batch.py",
                                      path("manifest.json").string()},
                                     dir_, "onnxruntime", std::chrono::seconds(600));
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  EXPECT_THAT(check.out, ::testing::HasSubstr("\"failed\": 0"));
  std::cout << check.out.substr(check.out.rfind('{'));
}

}  // namespace
}  // namespace cohort::testing
