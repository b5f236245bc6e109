// Internal to io/: what an emitter of traced ops needs of the ONNX graph being built, and the table
// from a traced op's name to its emitter. Each family of ops has its emitters in a file of its own
// (onnx_emit_layers.cpp, onnx_emit_elementwise.cpp, onnx_emit_shape.cpp, onnx_sequence.cpp,
// onnx_transformer.cpp); onnx.cpp builds the graph and looks each record up in the table, so a new
// mapping is one entry in its family's list.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cohort/autograd/trace.h"
#include "cohort/core/tensor.h"
#include "cohort/io/onnx.h"
#include "io/onnx_proto.h"

namespace cohort::io::detail {

// TensorProto.DataType of a cohort dtype (0 for none).
int32_t onnx_type(DType t);

// One ONNX attribute, already serialised as an AttributeProto.
struct Attribute {
  proto::Writer w;
  static Attribute i(const std::string& name, int64_t v);
  static Attribute f(const std::string& name, double v);
  static Attribute s(const std::string& name, const std::string& v);
  static Attribute ints(const std::string& name, const std::vector<int64_t>& v);
  static Attribute strings(const std::string& name, const std::vector<std::string>& v);
};

class Graph {
 public:
  virtual ~Graph() = default;
  // The name of the value `t` holds (the input, a node's output, an initializer for a parameter or a
  // constant); throws naming `op` when `t` was computed by an op the trace did not see.
  virtual std::string value(const Tensor& t, const std::string& op) = 0;
  // A node whose output is a new intermediate value; returns its name.
  virtual std::string node(const std::string& op_type, std::vector<std::string> inputs,
                           std::vector<Attribute> attrs = {}) = 0;
  // A node with `count` outputs (ONNX's LSTM: Y, Y_h, Y_c); returns their names.
  virtual std::vector<std::string> node_outputs(const std::string& op_type, std::vector<std::string> inputs,
                                                std::vector<Attribute> attrs, size_t count) = 0;
  // Names the value `t` holds `name` (an output of a node made with node() or node_outputs()).
  virtual void bind(const Tensor& t, const std::string& name) = 0;
  // The node that computes the traced op's output `y`.
  virtual void emit(const Tensor& y, const std::string& op_type, std::vector<std::string> inputs,
                    std::vector<Attribute> attrs = {}) = 0;
  // `t` as an initializer named `name`, or "const_<k>" when `name` is empty; returns the name.
  virtual std::string constant(const Tensor& t, const std::string& name = "") = 0;
  virtual std::string constant_ints(const std::vector<int64_t>& v) = 0;
  // The options of the export (the opset, the dynamic dimensions).
  virtual const OnnxExportOptions& options() const = 0;
  // The state_dict name of a parameter or buffer of the exported module ("lstm.weight_ih_l0"), or "".
  virtual std::string module_name(const Tensor& t) const = 0;
};

// Turns one traced op into nodes, ending with emit() (or bind()) of the record's output.
using Emitter = std::function<void(Graph&, const trace::Record&)>;
using EmitterList = std::vector<std::pair<std::string, Emitter>>;

EmitterList layer_emitters();        // conv, linear, matmul, addmm, batch_norm, the pools, softmax
EmitterList elementwise_emitters();  // unary and binary pointwise ops, the activations
EmitterList shape_emitters();        // reshape, flatten, permute, cat
EmitterList sequence_emitters();     // embedding, lstm, gru, rnn
EmitterList transformer_emitters();  // layer_norm, multihead_attention

// Every family's emitters by op name (built once; onnx.cpp).
const std::unordered_map<std::string, Emitter>& emitters();

}  // namespace cohort::io::detail
