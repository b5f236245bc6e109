// Internal to io/: what an emitter of traced ops needs of the ONNX graph being built, so that the
// emitters of one family of ops (src/io/onnx_sequence.cpp: embeddings, recurrent layers;
// src/io/onnx_transformer.cpp: layer norm, attention) live in a file of their own beside onnx.cpp's.
#pragma once

#include <cstdint>
#include <string>
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
  // The node that computes the traced op's output `y`.
  virtual void emit(const Tensor& y, const std::string& op_type, std::vector<std::string> inputs,
                    std::vector<Attribute> attrs = {}) = 0;
  // `t` as an initializer named `name`, or "const_<k>" when `name` is empty; returns the name.
  virtual std::string constant(const Tensor& t, const std::string& name = "") = 0;
  virtual std::string constant_ints(const std::vector<int64_t>& v) = 0;
  // The opset the model is written for.
  virtual int64_t opset() const = 0;
  // The state_dict name of a parameter or buffer of the exported module ("lstm.weight_ih_l0"), or "".
  virtual std::string module_name(const Tensor& t) const = 0;
};

// Emits `r` when it is an op of src/io/onnx_sequence.cpp (embedding, lstm, gru, rnn); false for other ops.
bool emit_sequence_op(Graph& g, const trace::Record& r);
// Emits `r` when it is an op of src/io/onnx_transformer.cpp (layer_norm, multihead_attention).
bool emit_transformer_op(Graph& g, const trace::Record& r);

}  // namespace cohort::io::detail
