// `cohort export --checkpoint DIR --onnx model.onnx`: the checkpoint's model through io::export_onnx,
// with the data's normalisation inside the graph and what else a consumer must know in its metadata.
#include "app/export.h"

#include <filesystem>
#include <ostream>
#include <sstream>

#include "cohort/core/error.h"
#include "cohort/io/onnx.h"
#include "cohort/ops/creation.h"

#include "app/data_setup.h"
#include "app/json_text.h"
#include "app/run_checkpoint.h"
#include "app/run_dir.h"

namespace cohort::app {

namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + escape_text(n);
  return out;
}

std::string numbers(const std::vector<double>& values) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < values.size(); ++i) out << (i ? ", " : "") << values[i];
  return out.str() + "]";
}

}  // namespace

ExportContract export_contract(const DataSpec& data) {
  ExportContract c;
  const std::string norm = "(x - mean) / std with mean " + numbers(data.mean) + " and std " + numbers(data.std);
  if (data.kind == DataKind::kTable) {
    const std::string f = std::to_string(data.channels);
    c.layout = "N x " + f + " float32: raw feature columns, in this order: " + joined(data.features);
    c.instructions = "feed raw rows as float32 [N, " + f + "] in column order " + joined(data.features) +
                     "; standardisation " + norm + " per column is inside the graph";
    return c;
  }
  const std::string s = std::to_string(data.image_size);
  const std::string colour = data.channels == 1 ? "grey" : data.channels == 3 ? "RGB" : std::to_string(data.channels) + " channels";
  c.layout = "NCHW float32 [N, " + std::to_string(data.channels) + ", " + s + ", " + s + "], " + colour +
             ", pixels in [0, 1]";
  c.resize = "resize each image to " + s + "x" + s + " (bilinear with antialias, as torchvision's Resize; the aspect "
             "ratio is not kept), as cohort predict does for an image of another size";
  c.instructions = c.resize + "; lay it out as " + c.layout + " (byte / 255); normalisation " + norm +
                   " per channel is inside the graph";
  return c;
}

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

  // The file takes what `cohort predict` is given after decoding: a table's raw rows, an image's
  // pixels in [0, 1]. The normalisation predict applies next is the graph's first nodes, so the two
  // agree without the consumer knowing the training data's statistics.
  const ExportContract contract = export_contract(data);
  const nlohmann::json spec = to_json(data);
  auto onnx = io::OnnxExportOptions()
                  .opset(options.opset)
                  .normalize_input(data.mean, data.std)
                  .metadata("producer", std::string("cohort ") + COHORT_VERSION)
                  .metadata("model", config.model)
                  .metadata("dataset", config.dataset)
                  .metadata("classes", json_text(spec.at("classes")))
                  .metadata("input_layout", contract.layout)
                  .metadata("output", "N x " + std::to_string(data.classes.size()) +
                                          " float32 logits, in the order of 'classes' (softmax gives probabilities)");
  if (data.kind == DataKind::kTable) onnx.metadata("feature_columns", json_text(spec.at("features")));
  if (!contract.resize.empty()) onnx.metadata("image_resize", contract.resize);
  onnx.metadata("preprocessing", contract.instructions);

  // The zoo's forward passes take no branch on values, so any input of the right shape traces them.
  // A table model is shaped [N, F, 1, 1] like an image; the file takes rows [N, F].
  const bool table = data.kind == DataKind::kTable;
  const int64_t features = data.channels;
  const Tensor example = table ? zeros({2, features}) : example_input(data, 2);
  io::export_onnx(
      *model, [&](const Tensor& x) { return model->forward(table ? x.view({-1, features, 1, 1}) : x); }, example,
      options.onnx, onnx);
  const auto summary = io::read_onnx_summary(std::filesystem::path(options.onnx));
  out << "cohort export: " << escape_text(checkpoint.path.string()) << " (" << config.model << ", "
      << model->parameters().size() << " parameter tensors) -> " << escape_text(options.onnx) << "\n"
      << "  ONNX opset " << summary.opset << ", " << summary.ops.size() << " nodes, " << summary.initializers.size()
      << " initializers; input \"input\" [N";
  for (size_t d = 1; d < static_cast<size_t>(example.dim()); ++d) out << ", " << example.size(static_cast<int64_t>(d));
  out << "] " << example.dtype() << ", output \"output\" [N, " << data.classes.size() << "] logits\n"
      << "  the consumer must: " << contract.instructions << "\n"
      << "  metadata_props:";
  for (const auto& [key, value] : summary.metadata) out << " " << key;
  out << "\n";
}

}  // namespace cohort::app
