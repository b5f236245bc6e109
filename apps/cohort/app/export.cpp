// `cohort export --checkpoint DIR --onnx model.onnx`: the checkpoint's model through io::export_onnx.
#include "app/export.h"

#include <filesystem>
#include <ostream>

#include "cohort/core/error.h"
#include "cohort/io/onnx.h"

#include "app/data_setup.h"
#include "app/run_checkpoint.h"
#include "app/run_dir.h"

namespace cohort::app {

void run_export(const ExportOptions& options, std::ostream& out) {
  COHORT_CHECK(!options.onnx.empty(), "cohort export: --onnx needs a file name");
  check_output_flag(options.onnx, "cohort export: --onnx");
  Checkpoint checkpoint = read_checkpoint(options.checkpoint);
  TrainConfig config = checkpoint.config;
  if (!options.data_dir.empty()) config.data_dir = std::filesystem::absolute(options.data_dir).lexically_normal();
  const DataSpec data = stored_or_loaded_spec(checkpoint.data, config, "cohort export");
  // A language model's forward starts with an embedding lookup and runs an LSTM or attention, which
  // the exporter has no mapping for: refused before anything is built or written.
  COHORT_CHECK(data.kind != DataKind::kText, "cohort export: ", config.model, " (", escape_text(checkpoint.path.string()),
               ") is a language model, which the ONNX exporter does not cover yet (its embedding lookup and its ",
               config.model == "char-lstm" ? "LSTM" : "attention layers", " have no ONNX mapping in cohort); hint: "
               "`cohort generate --checkpoint ", escape_text(options.checkpoint), "` runs it, and its weights are in "
               "the checkpoint, a safetensors file other tools read");
  auto model = create_model(config.model, data);
  restore_checkpoint(checkpoint, *model, nullptr, nullptr);
  model->eval();
  // The zoo's forward passes take no branch on values, so any input of the right shape traces them.
  const Tensor example = example_input(data, 2);
  io::export_onnx(model, example, options.onnx, io::OnnxExportOptions().opset(options.opset));
  const auto summary = io::read_onnx_summary(std::filesystem::path(options.onnx));
  out << "cohort export: " << escape_text(checkpoint.path.string()) << " (" << config.model << ", "
      << model->parameters().size() << " parameter tensors) -> " << escape_text(options.onnx) << "\n"
      << "  ONNX opset " << summary.opset << ", " << summary.ops.size() << " nodes, " << summary.initializers.size()
      << " initializers; input \"input\" [N";
  for (size_t d = 1; d < static_cast<size_t>(example.dim()); ++d) out << ", " << example.size(static_cast<int64_t>(d));
  out << "] " << example.dtype() << ", output \"output\" [N, " << data.classes.size() << "] logits\n";
}

}  // namespace cohort::app
