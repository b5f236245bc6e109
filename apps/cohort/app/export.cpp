// `cohort export --checkpoint DIR --onnx model.onnx --pytorch model.pt`: the checkpoint's model through
// io::export_onnx, with the data's normalisation inside the graph and what else a consumer must know in
// its metadata, and its state dict in torch.save's format with the Python that loads it.
#include "app/export.h"

#include <cstdio>
#include <filesystem>
#include <ostream>
#include <sstream>

#include "cohort/core/error.h"
#include "cohort/io/onnx.h"
#include "cohort/io/torch_file.h"
#include "cohort/models/char_lstm.h"
#include "cohort/ops/creation.h"

#include "app/config.h"
#include "app/data_setup.h"
#include "app/json_text.h"
#include "app/pytorch_snippet.h"
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

// The vocabulary as JSON: entry i is the byte of id i, as a one-character string when it is ASCII,
// else (a byte of a multi-byte UTF-8 character, not a string on its own) as the four characters
// "\xHH" (lower-case hex); a one-character entry is always the byte itself, so the two cannot be
// confused. "vocabulary_bytes" carries the same as numbers.
std::pair<std::string, std::string> vocabulary_json(const std::vector<std::string>& characters) {
  nlohmann::json text = nlohmann::json::array(), bytes = nlohmann::json::array();
  for (const std::string& c : characters) {
    const auto b = static_cast<unsigned char>(c.empty() ? 0 : c[0]);
    bytes.push_back(b);
    if (b < 0x80) {
      text.push_back(std::string(1, static_cast<char>(b)));
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", b);
      text.push_back(std::string(hex));
    }
  }
  return {json_text(text), json_text(bytes)};
}

// What every ONNX file of `cohort export` holds in its metadata: what wrote it, from which run.
io::OnnxExportOptions onnx_options(const ExportOptions& options, const TrainConfig& config) {
  return io::OnnxExportOptions()
      .opset(options.opset)
      .metadata("producer", std::string("cohort ") + COHORT_VERSION)
      .metadata("model", config.model)
      .metadata("dataset", config.dataset);
}

// What `cohort export` prints once the ONNX file is written: the file's input and output (as given),
// its size in nodes and initializers, what the consumer must still do and the metadata keys.
// `ports` describes the inputs and outputs: 'input "input" [N, 10] float32, output "output" [N, 3] logits'.
void print_onnx_written(std::ostream& out, const std::string& checkpoint, const TrainConfig& config,
                        const models::Model& model, const std::string& file, const std::string& ports,
                        const std::string& instructions) {
  const auto summary = io::read_onnx_summary(std::filesystem::path(file));
  out << "cohort export: " << escape_text(checkpoint) << " (" << config.model << ", " << model.parameters().size()
      << " parameter tensors) -> " << escape_text(file) << "\n"
      << "  ONNX opset " << summary.opset << ", " << summary.ops.size() << " nodes, " << summary.initializers.size()
      << " initializers; " << ports << "\n"
      << "  the consumer must: " << instructions << "\n"
      << "  metadata_props:";
  for (const auto& [key, value] : summary.metadata) out << " " << key;
  out << "\n";
}

// A language model's file takes the character ids [N, T] (int64) and gives the logits of every
// position as the model's forward does, [N * T, V] with row n * T + t for position t of sequence n.
// char-lstm takes any T, and its states too: "h0" and "c0" in (zeros for a new text), "h_n" and "c_n"
// out, to feed back for the text's continuation, so that a consumer generates one character per call.
// char-transformer takes T up to its training window W: its position ids and causal mask are traced
// for W and sliced to the input's T in the graph (a prefix of either is the table for a shorter text).
void export_language_model(models::Model& model, const TrainConfig& config, const DataSpec& data,
                           const std::string& checkpoint, const ExportOptions& options, std::ostream& out) {
  const auto V = static_cast<int64_t>(data.classes.size());
  const auto [vocabulary, vocabulary_bytes] = vocabulary_json(data.classes);
  auto* lstm = dynamic_cast<models::CharLSTM*>(&model);
  const int64_t W = config.seq_len;
  // A dynamic length needs an example of at least 2 ids, and a batch of another size than it.
  const bool any_length = lstm != nullptr || W >= 2;
  const int64_t T = lstm ? 3 : W, N = T == 2 ? 3 : 2;
  const std::string t = any_length ? "T" : std::to_string(T);
  const std::string window = std::to_string(W);
  const std::string state = "[N, " + std::to_string(models::CharLSTM::kLayers) + ", " +
                            std::to_string(models::CharLSTM::kHidden) + "] float32";
  const std::string lengths = lstm ? "any N >= 1 and T >= 1"
                              : any_length ? "any N >= 1 and 1 <= T <= " + window + ", the training window"
                                           : "any N >= 1, exactly " + t + " per row";
  const std::string layout = "int64 [N, " + t + "]: character ids (" + lengths + "), id i is entry i of 'vocabulary'" +
                             (lstm ? "; h0 and c0 " + state + ": the LSTM's states (batch, layers, hidden)" : "");
  const std::string instructions =
      "encode the text's bytes as their indices in 'vocabulary_bytes' (a character outside the vocabulary cannot "
      "be fed) and feed them as int64 [N, " + t + "]" +
      (lstm ? "; feed h0 and c0 as zeros " + state + " for a new text, or the h_n and c_n that the previous "
              "call returned to continue one (a text fed in pieces gives the logits of the text fed whole)"
            : "; of a text longer than " + window + " characters feed the last " + window) +
      "; the next character's distribution is the softmax of the row of the text's last position";
  auto onnx = onnx_options(options, config)
                  .dynamic_sequence(any_length)
                  .slice_sequence_constants(any_length && !lstm)
                  .metadata("vocabulary", vocabulary)
                  .metadata("vocabulary_bytes", vocabulary_bytes)
                  .metadata("vocabulary_escape", "an entry is its byte as a one-character string when ASCII, "
                            "else the four characters \\xHH (the byte in lower-case hex)")
                  .metadata("input_layout", layout)
                  .metadata("output", "N*" + t + " x " + std::to_string(V) + " float32 logits, row n*" + t +
                                          " + t for position t of sequence n, in the order of 'vocabulary' (softmax "
                                          "gives the next character's probabilities)" +
                                          (any_length ? "; h_n and c_n " + state + ": the states after the text" : ""))
                  .metadata("context_length", std::to_string(config.seq_len))
                  .metadata("preprocessing", instructions);
  // The trace is of N sequences of T ids (N and T differ, so the exporter tells them apart).
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < N * T; ++i) ids.push_back(i % V);
  const Tensor example = tensor(ids).view({N, T});
  const std::string logits = "\"output\" [N*" + t + ", " + std::to_string(V) + "] logits";
  if (!lstm) {
    io::export_onnx(model, [&](const Tensor& x) { return model.forward(x); }, example, options.onnx, onnx);
    print_onnx_written(out, checkpoint, config, model, options.onnx,
                       "input \"input\" [N, " + t + "] int64 ids, output " + logits, instructions);
    return;
  }
  onnx.input_names({"input", "h0", "c0"})
      .output_names({"output", "h_n", "c_n"})
      .dynamic_axes("input", {{0, "N"}, {1, "T"}})
      .dynamic_axes("output", {{0, "N*T"}});
  for (const char* port : {"h0", "c0", "h_n", "c_n"}) onnx.dynamic_axes(port, {{0, "N"}});
  const Tensor zero = zeros({N, models::CharLSTM::kLayers, models::CharLSTM::kHidden});
  io::export_onnx(
      model,
      [&](const std::vector<Tensor>& in) {
        auto [y, h, c] = lstm->forward(in[0], in[1], in[2]);
        return std::vector<Tensor>{y, h, c};
      },
      {example, zero, zero}, options.onnx, onnx);
  print_onnx_written(out, checkpoint, config, model, options.onnx,
                     "inputs \"input\" [N, T] int64 ids, \"h0\" and \"c0\" " + state + " states; outputs " +
                         logits + ", \"h_n\" and \"c_n\" " + state + " states",
                     instructions);
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

namespace {

// Checks the output flags before any work: at least one file, two different files, each a regular
// file or none yet (check_output_flag).
void check_export_flags(const ExportOptions& options) {
  if (options.onnx.empty() && options.pytorch.empty())
    throw UsageError("cohort export: give --onnx FILE, --pytorch FILE or both, got neither; hint: cohort export "
                     "--checkpoint RUN --onnx model.onnx --pytorch model.pt");
  if (!options.onnx.empty()) check_output_flag(options.onnx, "cohort export: --onnx");
  if (!options.pytorch.empty()) check_output_flag(options.pytorch, "cohort export: --pytorch");
  if (!options.onnx.empty() && !options.pytorch.empty() &&
      std::filesystem::weakly_canonical(options.onnx) == std::filesystem::weakly_canonical(options.pytorch))
    throw UsageError("cohort export: --onnx and --pytorch must name two files, got " + escape_text(options.onnx) +
                     " for both");
}

void write_onnx(const ExportOptions& options, const Checkpoint& checkpoint, const TrainConfig& config,
                const DataSpec& data, models::Model& model, std::ostream& out) {
  if (data.kind == DataKind::kText) {
    export_language_model(model, config, data, checkpoint.path.string(), options, out);
    return;
  }
  // The file takes what `cohort predict` is given after decoding: a table's raw rows, an image's
  // pixels in [0, 1]. The normalisation predict applies next is the graph's first nodes, so the two
  // agree without the consumer knowing the training data's statistics.
  const ExportContract contract = export_contract(data);
  const nlohmann::json spec = to_json(data);
  auto onnx = onnx_options(options, config)
                  .normalize_input(data.mean, data.std)
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
      model, [&](const Tensor& x) { return model.forward(table ? x.view({-1, features, 1, 1}) : x); }, example,
      options.onnx, onnx);
  std::ostringstream input;
  input << "[N";
  for (int64_t d = 1; d < example.dim(); ++d) input << ", " << example.size(d);
  input << "] " << example.dtype();
  print_onnx_written(out, checkpoint.path.string(), config, model, options.onnx,
                     "input \"input\" " + input.str() + ", output \"output\" [N, " +
                         std::to_string(data.classes.size()) + "] logits",
                     contract.instructions);
}

void write_pytorch(const ExportOptions& options, const Checkpoint& checkpoint, const TrainConfig& config,
                   const DataSpec& data, const models::Model& model, std::ostream& out) {
  // Python's state_dict() holds detached tensors; so does the file, so that torch.load gives leaves
  // that do not require grad, as torch.save(model.state_dict(), f) would.
  io::PyValue::DictItems items;
  int64_t elements = 0;
  for (const auto& item : model.state_dict()) {
    items.emplace_back(item.key(), item.value().detach());
    elements += item.value().numel();
  }
  const size_t count = items.size();
  io::write_torch_file(options.pytorch, io::PyValue::dict(std::move(items), /*ordered=*/true));
  bool has_module = false;
  const std::string snippet = pytorch_snippet(model, data, options.pytorch, &has_module);
  out << "cohort export: " << escape_text(checkpoint.path.string()) << " (" << config.model << ", " << count
      << " state dict tensors, " << elements << " values) -> " << escape_text(options.pytorch) << "\n"
      << "  PyTorch's torch.save format: torch.load gives an OrderedDict of PyTorch's key names -> tensors\n"
      << (has_module ? "  the torch.nn model that loads it, in Python:\n\n"
                     : "  no few-line torch.nn equivalent is known for this model; its keys, in Python comments:\n\n")
      << snippet;
}

}  // namespace

void run_export(const ExportOptions& options, std::ostream& out) {
  check_export_flags(options);
  Checkpoint checkpoint = read_checkpoint(options.checkpoint);
  TrainConfig config = checkpoint.config;
  if (!options.data_dir.empty()) config.data_dir = std::filesystem::absolute(options.data_dir).lexically_normal();
  const DataSpec data = stored_or_loaded_spec(checkpoint.data, config, "cohort export");
  auto model = create_model(config.model, data);
  restore_weights(checkpoint, *model);
  model->eval();
  // The snippet comes last in what is printed, so that it can be copied as it stands.
  if (!options.onnx.empty()) write_onnx(options, checkpoint, config, data, *model, out);
  if (!options.pytorch.empty()) write_pytorch(options, checkpoint, config, data, *model, out);
}

}  // namespace cohort::app
