// ONNX export: a trace of a module's forward pass written as an ONNX model (opset 13), which other
// engines (ONNX Runtime, OpenCV's dnn, TensorRT, ...) run without cohort.
//
//   auto net = models::create("resnet18");
//   net->eval();
//   io::export_onnx(net, torch::randn({2, 3, 32, 32}), "resnet18.onnx");
//
// The module runs once on `example_input` (with gradients on, so that an op the exporter cannot see
// is caught; the module's values are not changed) and every op it calls is recorded in order; the
// ONNX graph has one input "input" (the example's shape, the first dimension dynamic, "N"), one
// output "output" (a forward of several inputs and outputs: MultiForward below), and the
// parameters and buffers the forward read as initializers named as in
// state_dict() ("conv1.weight", "bn1.running_mean"). Other tensors the forward made without an input
// (a scalar such as the 0.5 in `x * 0.5`) become initializers "const_<k>". What the model expects
// of its input can travel in the file: the normalisation as nodes of the graph
// (OnnxExportOptions::normalize_input) and anything else as metadata_props (::metadata).
//
// What is exported: conv1d/conv2d (any padding, stride, dilation, groups), linear, matmul, mm,
// addmm, batch_norm in evaluation mode, relu (and relu_), sigmoid, tanh, gelu, silu, leaky_relu, exp,
// log, sqrt, abs, neg, erf, add/sub/mul/div/pow (tensors or numbers, broadcasting), max_pool2d,
// avg_pool2d, adaptive_avg_pool2d and adaptive_max_pool2d (global, or an output size that divides the
// input), view/reshape/flatten/unsqueeze, permute/transpose, cat, softmax/log_softmax, dropout in
// evaluation mode (the identity), clone (Identity), the in-place unsqueeze_/squeeze_/transpose_/t_,
// embedding (Gather; the input may then be int64 ids), nn::LSTM
// (ONNX's LSTM, one node per layer, gates regrouped from cohort's i, f, g, o to ONNX's i, o, f, c; any
// number of layers, one or two directions, with or without bias, batch_first or not, initial states
// absent (zeros) or given, as constants or graph inputs, and the final states h_n and c_n as outputs
// when the forward returns them; not proj_size, not a packed sequence, not unbatched), nn::GRU and nn::RNN
// in the same form (ONNX's GRU with linear_before_reset=1, gates regrouped from r, z, n to z, r, h;
// ONNX's RNN with Tanh or Relu), layer_norm
// (LayerNormalization from opset 17, its ReduceMean decomposition before), nn::MultiheadAttention
// (batched, kdim = vdim = embed_dim, a 2-d attn_mask or none, no key_padding_mask; as MatMul, Reshape,
// Transpose and Softmax nodes). An op whose inputs are all constants and that needs no gradient (a
// causal mask built with arange and a comparison) is folded: its value is a constant. The model zoo
// exports whole (lenet, blitz-cnn, resnet18/34/50, mlp, char-lstm for any T; char-transformer for any
// T up to the example's, with slice_sequence_constants). io::onnx_exported_ops() lists the mapped ops;
// tests/io/onnx_coverage_test.cpp runs the op table through the exporter. The trace records the
// path this example took: control flow on values is frozen, and sizes other than the first dimension
// (and the second, with dynamic_sequence) are those of the example.
//
// Throws cohort::Error "export_onnx: <path>: ..." naming the op for anything it cannot represent: an
// op without an ONNX mapping (named by the op and the module whose parameter it reads, or by its
// autograd node when the op does not report itself, e.g. "CumsumBackward0"), a module in training mode (batch norm, dropout), an output that
// does not depend on the input, an input other than float32/float64/int64, a normalisation of int64
// ids or one that does not fit the
// input's dim 1, an empty or repeated metadata key. The file is written atomically (Note
// [Atomic writes] in src/io/file_util.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cohort/core/tensor.h"
#include "cohort/nn/module.h"
#include "cohort/nn/module_holder.h"

namespace cohort::io {

struct OnnxExportOptions {
  OnnxExportOptions& opset(int64_t v) { opset_ = v; return *this; }
  // Whether the first dimension of the input and the output is the symbolic "N" (else the example's).
  OnnxExportOptions& dynamic_batch(bool v) { dynamic_batch_ = v; return *this; }
  // Whether the input's second dimension (a sequence's length, "T") is symbolic too; the example's
  // N and T must then differ and T be at least 2, so that the exporter tells the two apart.
  OnnxExportOptions& dynamic_sequence(bool v) { dynamic_sequence_ = v; return *this; }
  // With dynamic_sequence: a constant the forward read with dimensions of the example's length T (the
  // position ids of a transformer, its causal mask) is the first T of a table that holds for any
  // shorter length, and is sliced along those dimensions to the input's T at run time. Only for a
  // model where that is so (a causal mask is; a constant that depends on T otherwise is not); the
  // example's T is then the longest the file takes.
  OnnxExportOptions& slice_sequence_constants(bool v) { slice_sequence_constants_ = v; return *this; }
  OnnxExportOptions& graph_name(std::string v) { graph_name_ = std::move(v); return *this; }
  // Normalisation inside the graph: the model is fed raw values (an image's pixels in [0, 1], a
  // table's raw columns) and the graph first computes (input - mean[c]) / std[c] along dim 1 (an
  // image's channel, a table row's feature), subtracting then dividing in the input's dtype as
  // data::transforms::Normalize does, so that the file's outputs are cohort's to the rounding. The
  // nodes are a Sub and a Div on initializers "input_mean" and "input_std", before the model's first
  // node; metadata "input_normalization" records the numbers and that they are inside the graph.
  // One mean and one positive std per element of the input's dim 1 (checked at export).
  OnnxExportOptions& normalize_input(std::vector<double> mean, std::vector<double> std) {
    input_mean_ = std::move(mean), input_std_ = std::move(std);
    return *this;
  }
  // One entry of the model's metadata_props (a key -> value string map that ONNX runtimes expose to
  // the program running the model, e.g. onnxruntime's modelmeta.custom_metadata_map): what the
  // consumer must know of the input and output. Keys must be unique and not empty; export refuses a
  // key the exporter writes itself ("input_normalization").
  OnnxExportOptions& metadata(std::string key, std::string value) {
    metadata_.emplace_back(std::move(key), std::move(value));
    return *this;
  }
  // The graph's input and output names, in the order of the example inputs and of the forward's
  // outputs. Default: "input" and "output" for the first, "input_1", "output_1", ... after.
  OnnxExportOptions& input_names(std::vector<std::string> v) { input_names_ = std::move(v); return *this; }
  OnnxExportOptions& output_names(std::vector<std::string> v) { output_names_ = std::move(v); return *this; }
  // The symbolic dimensions of the input or output `name`, as torch.onnx.export's dynamic_axes:
  // dynamic_axes("h0", {{1, "N"}}) makes dimension 1 of "h0" the symbol "N" (an LSTM state's batch).
  // A value named here has exactly these symbolic dimensions; the first input and every output that
  // is not follow dynamic_batch and dynamic_sequence, and other inputs keep the example's sizes.
  OnnxExportOptions& dynamic_axes(std::string name, std::vector<std::pair<int64_t, std::string>> axes) {
    dynamic_axes_.emplace_back(std::move(name), std::move(axes));
    return *this;
  }
  int64_t opset() const { return opset_; }
  bool dynamic_batch() const { return dynamic_batch_; }
  bool dynamic_sequence() const { return dynamic_sequence_; }
  bool slice_sequence_constants() const { return slice_sequence_constants_; }
  const std::string& graph_name() const { return graph_name_; }
  const std::vector<double>& input_mean() const { return input_mean_; }
  const std::vector<double>& input_std() const { return input_std_; }
  const std::vector<std::pair<std::string, std::string>>& metadata() const { return metadata_; }
  const std::vector<std::string>& input_names() const { return input_names_; }
  const std::vector<std::string>& output_names() const { return output_names_; }
  const std::vector<std::pair<std::string, std::vector<std::pair<int64_t, std::string>>>>& dynamic_axes() const {
    return dynamic_axes_;
  }

 private:
  int64_t opset_ = 13;  // 13 to 17: the ops used mean the same in all of them
  bool dynamic_batch_ = true;
  bool dynamic_sequence_ = false;
  bool slice_sequence_constants_ = false;
  std::string graph_name_ = "cohort";
  std::vector<double> input_mean_, input_std_;  // empty: the input goes to the model as it is
  std::vector<std::pair<std::string, std::string>> metadata_;
  std::vector<std::string> input_names_, output_names_;  // empty: "input", "input_1", ...
  std::vector<std::pair<std::string, std::vector<std::pair<int64_t, std::string>>>> dynamic_axes_;
};

// The general form: `forward` runs the module on its argument (module->forward(x), or a lambda).
// Returns the serialised model; export_onnx writes it to a file.
std::string export_onnx_bytes(const nn::Module& module, const std::function<Tensor(const Tensor&)>& forward,
                              const Tensor& example_input, const OnnxExportOptions& options = {});
void export_onnx(const nn::Module& module, const std::function<Tensor(const Tensor&)>& forward,
                 const Tensor& example_input, const std::filesystem::path& path,
                 const OnnxExportOptions& options = {});

// Several inputs and outputs (a recurrent model's ids and initial states in, its logits and final
// states out): `forward` maps the inputs, in the order of `example_inputs`, to the outputs. Each
// example input is float32, float64 or int64; normalize_input applies to the first.
//   io::export_onnx(*lm, [&](const std::vector<Tensor>& in) { auto [y, h, c] = lm->forward(in[0], in[1], in[2]);
//                                                             return std::vector<Tensor>{y, h, c}; },
//                   {ids, h0, c0}, "lm.onnx", io::OnnxExportOptions().input_names({"input", "h0", "c0"})
//                       .output_names({"output", "h_n", "c_n"}).dynamic_axes("h0", {{0, "N"}}) ...);
using MultiForward = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;
std::string export_onnx_bytes(const nn::Module& module, const MultiForward& forward,
                              const std::vector<Tensor>& example_inputs, const OnnxExportOptions& options = {});
void export_onnx(const nn::Module& module, const MultiForward& forward, const std::vector<Tensor>& example_inputs,
                 const std::filesystem::path& path, const OnnxExportOptions& options = {});

// The traced ops the exporter maps to ONNX, by cohort name ("conv2d", "lstm", ...), sorted. A traced op
// not listed is refused by export_onnx, naming it.
std::vector<std::string> onnx_exported_ops();

// A module holder (nn::Sequential, nn::Linear, ...) or a std::shared_ptr to a module with forward(x).
template <class Impl>
void export_onnx(const nn::ModuleHolder<Impl>& module, const Tensor& example_input, const std::filesystem::path& path,
                 const OnnxExportOptions& options = {}) {
  export_onnx(*module, [&](const Tensor& x) { return module.ptr()->forward(x); }, example_input, path, options);
}
template <class M, std::enable_if_t<std::is_base_of_v<nn::Module, M>, int> = 0>
void export_onnx(const std::shared_ptr<M>& module, const Tensor& example_input, const std::filesystem::path& path,
                 const OnnxExportOptions& options = {}) {
  export_onnx(*module, [&](const Tensor& x) { return module->forward(x); }, example_input, path, options);
}

// What an ONNX file holds, as far as cohort reads it back (for checks and tests; not an ONNX runtime).
struct OnnxSummary {
  struct Value {
    std::string name;
    int32_t elem_type = 0;  // ONNX's TensorProto.DataType: 1 float, 7 int64, 11 double
    std::vector<std::string> dims;  // each dimension's value, or its symbol ("N")
  };
  struct Initializer {
    std::string name;
    int32_t data_type = 0;
    std::vector<int64_t> dims;
    uint64_t raw_bytes = 0;
  };
  int64_t ir_version = 0;
  int64_t opset = 0;  // of the default domain
  std::string producer;
  std::vector<std::string> ops;  // op_type of each node, in order
  std::vector<Initializer> initializers;
  std::vector<Value> inputs, outputs;
  std::vector<std::pair<std::string, std::string>> metadata;  // metadata_props, in the file's order

  // The value of metadata key `key`, or null when the file has none.
  const std::string* find_metadata(const std::string& key) const {
    for (const auto& [k, v] : metadata)
      if (k == key) return &v;
    return nullptr;
  }
};

// Parses the protobuf of an ONNX model (the fields above; others are skipped). Throws a cohort::Error
// "read_onnx_summary: <where>: ..." for anything malformed: a truncated varint or field, a length past
// the end, a wire type ONNX does not use, a field of the wrong wire type, raw data that does not
// match the initializer's dims and type.
OnnxSummary read_onnx_summary(const std::string& bytes, const std::string& where = "<bytes>");
OnnxSummary read_onnx_summary(const std::filesystem::path& path);

}  // namespace cohort::io
