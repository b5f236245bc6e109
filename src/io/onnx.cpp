// ONNX export: trace the forward pass (cohort/autograd/trace.h), map each recorded op to ONNX nodes, write
// the model with the hand-written protobuf writer (Note [Protobuf by hand] in onnx_proto.h).
#include "cohort/io/onnx.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "cohort/autograd/trace.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/autograd/node.h"
#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/shape.h"
#include "io/file_util.h"
#include "io/onnx_graph.h"
#include "io/onnx_proto.h"

namespace cohort::io {

namespace detail {

using proto::Writer;

// TensorProto.DataType and AttributeProto.AttributeType values.
constexpr int32_t kOnnxFloat = 1, kOnnxUInt8 = 2, kOnnxInt32 = 6, kOnnxInt64 = 7, kOnnxBool = 9, kOnnxDouble = 11;
constexpr int32_t kOnnxFloat16 = 10, kOnnxBFloat16 = 16;
constexpr int kAttrFloat = 1, kAttrInt = 2, kAttrString = 3, kAttrInts = 7, kAttrStrings = 8;

int32_t onnx_type(DType t) {
  switch (t) {
    case kFloat32: return kOnnxFloat;
    case kFloat64: return kOnnxDouble;
    case kInt64: return kOnnxInt64;
    case kInt32: return kOnnxInt32;
    case kUInt8: return kOnnxUInt8;
    case kBool: return kOnnxBool;
    case kFloat16: return kOnnxFloat16;
    case kBFloat16: return kOnnxBFloat16;
  }
  return 0;
}

Attribute Attribute::i(const std::string& name, int64_t v) {
  Attribute a;
  a.w.bytes(1, name), a.w.int64(20, kAttrInt), a.w.int64(3, v);
  return a;
}
Attribute Attribute::f(const std::string& name, double v) {
  Attribute a;
  a.w.bytes(1, name), a.w.int64(20, kAttrFloat), a.w.float32(2, static_cast<float>(v));
  return a;
}
Attribute Attribute::s(const std::string& name, const std::string& v) {
  Attribute a;
  a.w.bytes(1, name), a.w.int64(20, kAttrString), a.w.bytes(4, v);
  return a;
}
Attribute Attribute::ints(const std::string& name, const std::vector<int64_t>& v) {
  Attribute a;
  a.w.bytes(1, name), a.w.int64(20, kAttrInts);
  for (int64_t x : v) a.w.int64(8, x);
  return a;
}
Attribute Attribute::strings(const std::string& name, const std::vector<std::string>& v) {
  Attribute a;
  a.w.bytes(1, name), a.w.int64(20, kAttrStrings);
  for (const std::string& x : v) a.w.bytes(9, x);
  return a;
}

}  // namespace detail

namespace {

using proto::Writer;

using detail::Attribute;
using detail::onnx_type;

struct Node {
  std::string op_type;
  std::vector<std::string> inputs, outputs;
  std::vector<Attribute> attributes;
};

// Collects the records of one forward pass (Note [Tracing ops] in include/cohort/autograd/trace.h).
class Recorder : public trace::Tracer {
 public:
  void record(trace::Record r) override { records.push_back(std::move(r)); }
  void untraced(const char* node) override {
    std::string op(node);
    if (auto pos = op.find("Backward"); pos != std::string::npos) op.erase(pos);
    throw Error(cohort::detail::str("the forward ran ", op, " (autograd node ", node, "), which has no ONNX mapping in "
                            "cohort's exporter; hint: the exported ops are listed in cohort/io/onnx.h"));
  }
  std::vector<trace::Record> records;
};

// Builds the ONNX graph from the records: values are named by the tensor (its TensorImpl) that holds
// them, so a view or an in-place op that makes or rewrites a tensor gives it its new name.
class GraphBuilder : public detail::Graph {
 public:
  GraphBuilder(const nn::Module& module, const OnnxExportOptions& options) : options_(options) {
    for (const auto& item : module.named_parameters()) module_names_.emplace(item.value().unsafe_impl(), item.key());
    for (const auto& item : module.named_buffers()) module_names_.emplace(item.value().unsafe_impl(), item.key());
  }

  void bind_input(const Tensor& x, const std::string& name) { bind(x, name); }
  // A tensor the forward reads outside the module, exported as the initializer `name` (not const_<k>).
  void name_constant(const Tensor& t, const std::string& name) { module_names_.emplace(t.unsafe_impl(), name); }

  void add(const trace::Record& r) {
    const std::string& op = r.op;
    const Tensor& y = r.output;
    // An op on constants alone (a causal mask built from an arange) is folded: its output, a leaf,
    // becomes a constant where a later op reads it. One that reads the weights requires grad and is
    // not folded.
    if (!y.requires_grad() && !reads_graph_value(r)) return;
    auto in = [&](size_t i) { return value(r.inputs.at(i), op); };
    if (op == "conv1d" || op == "conv2d") {
      const Tensor& x = r.inputs[0];
      const Tensor& w = r.inputs[1];
      COHORT_CHECK(x.dim() == w.dim(), op, ": an unbatched input (", x.sizes(), ") cannot be exported; hint: "
                   "unsqueeze(0) it");
      std::vector<std::string> inputs{in(0), in(1)};
      if (r.inputs[2].defined()) inputs.push_back(in(2));
      std::vector<int64_t> kernel(w.sizes().begin() + 2, w.sizes().end());
      emit(y, "Conv", inputs,
           {Attribute::ints("kernel_shape", kernel), Attribute::ints("strides", r.ints_attr("strides")),
            Attribute::ints("pads", r.ints_attr("pads")), Attribute::ints("dilations", r.ints_attr("dilations")),
            Attribute::i("group", r.int_attr("groups"))});
    } else if (op == "linear") {
      const bool has_bias = r.inputs[2].defined();
      if (r.inputs[0].dim() == 2) {
        std::vector<std::string> inputs{in(0), in(1)};
        if (has_bias) inputs.push_back(in(2));
        emit(y, "Gemm", inputs, {Attribute::i("transB", 1)});
      } else {
        std::string wt = node("Transpose", {in(1)}, {Attribute::ints("perm", {1, 0})});
        if (!has_bias) {
          emit(y, "MatMul", {in(0), wt});
        } else {
          emit(y, "Add", {node("MatMul", {in(0), wt}), in(2)});
        }
      }
    } else if (op == "matmul") {
      emit(y, "MatMul", {in(0), in(1)});
    } else if (op == "addmm") {
      emit(y, "Gemm", {in(1), in(2), in(0)},
           {Attribute::f("alpha", r.float_attr("alpha")), Attribute::f("beta", r.float_attr("beta"))});
    } else if (op == "batch_norm") {
      const Tensor& x = r.inputs[0];
      const int64_t c = x.size(1);
      auto per_channel = [&](size_t i, double fill) {
        return r.inputs[i].defined() ? in(i) : constant(full({c}, fill, TensorOptions().dtype(x.dtype())));
      };
      emit(y, "BatchNormalization", {in(0), per_channel(1, 1.0), per_channel(2, 0.0), in(3), in(4)},
           {Attribute::f("epsilon", r.float_attr("eps"))});
    } else if (op == "relu" || op == "sigmoid" || op == "tanh" || op == "exp" || op == "log" || op == "sqrt" ||
               op == "abs" || op == "neg" || op == "erf" || op == "reciprocal" || op == "sin" || op == "cos") {
      static const std::unordered_map<std::string, std::string> kNames = {
          {"relu", "Relu"}, {"sigmoid", "Sigmoid"}, {"tanh", "Tanh"}, {"exp", "Exp"}, {"log", "Log"},
          {"sqrt", "Sqrt"}, {"abs", "Abs"}, {"neg", "Neg"}, {"erf", "Erf"}, {"reciprocal", "Reciprocal"},
          {"sin", "Sin"}, {"cos", "Cos"}};
      emit(y, kNames.at(op), {in(0)});
    } else if (op == "square") {
      emit(y, "Mul", {in(0), in(0)});
    } else if (op == "rsqrt") {
      emit(y, "Reciprocal", {node("Sqrt", {in(0)})});
    } else if (op == "leaky_relu") {
      emit(y, "LeakyRelu", {in(0)}, {Attribute::f("alpha", r.float_attr("negative_slope"))});
    } else if (op == "silu") {
      emit(y, "Mul", {in(0), node("Sigmoid", {in(0)})});
    } else if (op == "gelu") {
      add_gelu(r);
    } else if (op == "add" || op == "sub" || op == "mul" || op == "div" || op == "pow" || op == "maximum" ||
               op == "minimum") {
      static const std::unordered_map<std::string, std::string> kNames = {
          {"add", "Add"}, {"sub", "Sub"}, {"mul", "Mul"}, {"div", "Div"},
          {"pow", "Pow"}, {"maximum", "Max"}, {"minimum", "Min"}};
      const Tensor& a = r.inputs[0];
      const Tensor& b = r.inputs[1];
      COHORT_CHECK(a.dtype() == b.dtype() || op == "pow", op, ": operands of dtypes ", a.dtype(), " and ",
                   b.dtype(), " cannot be exported (ONNX does not promote); hint: convert one with .to()");
      std::string rhs = in(1);
      const double alpha = r.float_attr("alpha");
      if ((op == "add" || op == "sub") && alpha != 1)
        rhs = node("Mul", {rhs, constant(full({}, alpha, TensorOptions().dtype(b.dtype())))});
      emit(y, kNames.at(op), {in(0), rhs});
    } else if (op == "max_pool2d" || op == "avg_pool2d") {
      COHORT_CHECK(r.inputs[0].dim() == 4, op, ": an unbatched input (", r.inputs[0].sizes(),
                   ") cannot be exported; hint: unsqueeze(0) it");
      const auto& pad = r.ints_attr("padding");
      std::vector<Attribute> attrs{Attribute::ints("kernel_shape", r.ints_attr("kernel_size")),
                                   Attribute::ints("strides", r.ints_attr("stride")),
                                   Attribute::ints("pads", {pad[0], pad[1], pad[0], pad[1]})};
      if (r.int_attr("ceil_mode")) attrs.push_back(Attribute::i("ceil_mode", 1));
      if (op == "max_pool2d") {
        const auto& dilation = r.ints_attr("dilation");
        if (dilation[0] != 1 || dilation[1] != 1) attrs.push_back(Attribute::ints("dilations", dilation));
        emit(y, "MaxPool", {in(0)}, std::move(attrs));
      } else {
        if (r.int_attr("count_include_pad") && (pad[0] || pad[1])) attrs.push_back(Attribute::i("count_include_pad", 1));
        emit(y, "AveragePool", {in(0)}, std::move(attrs));
      }
    } else if (op == "adaptive_avg_pool2d" || op == "adaptive_max_pool2d") {
      const Tensor& x = r.inputs[0];
      COHORT_CHECK(x.dim() == 4, op, ": an unbatched input (", x.sizes(), ") cannot be exported; hint: unsqueeze(0) it");
      const bool avg = op == "adaptive_avg_pool2d";
      if (y.size(2) == 1 && y.size(3) == 1) {
        emit(y, avg ? "GlobalAveragePool" : "GlobalMaxPool", {in(0)});
      } else {
        COHORT_CHECK(x.size(2) % y.size(2) == 0 && x.size(3) % y.size(3) == 0, op, ": output size ", y.size(2), "x",
                     y.size(3), " does not divide the input ", x.sizes(), ", which ONNX's fixed-window pools cannot "
                     "represent; hint: pick an output size that divides the input's");
        const std::vector<int64_t> k{x.size(2) / y.size(2), x.size(3) / y.size(3)};
        emit(y, avg ? "AveragePool" : "MaxPool", {in(0)},
             {Attribute::ints("kernel_shape", k), Attribute::ints("strides", k)});
      }
    } else if (op == "reshape") {
      const Tensor& x = r.inputs[0];
      std::vector<int64_t> shape = r.ints_attr("shape");
      // Keep the batch dynamic: a first dimension the reshape leaves alone is copied from the input (0).
      if (options_.dynamic_batch() && x.dim() > 0 && y.dim() > 0 && !shape.empty() && shape[0] != -1 &&
          y.size(0) == x.size(0))
        shape[0] = 0;
      // Likewise the sequence's length, behind a batch that is kept ([N, T, C] -> [N, T, h, d]).
      if (options_.dynamic_sequence() && shape.size() > 1 && shape[0] == 0 && x.dim() > 1 && y.dim() > 1 &&
          shape[1] != -1 && y.size(1) == x.size(1))
        shape[1] = 0;
      emit(y, "Reshape", {in(0), constant_ints(shape)});
    } else if (op == "flatten") {
      const Tensor& x = r.inputs[0];
      const int64_t s = r.int_attr("start_dim"), e = r.int_attr("end_dim");
      std::vector<int64_t> shape(static_cast<size_t>(s), 0);
      shape.push_back(-1);
      for (int64_t d = e + 1; d < x.dim(); ++d) shape.push_back(x.size(d));
      emit(y, "Reshape", {in(0), constant_ints(shape)});
    } else if (op == "permute") {
      std::vector<int64_t> perm = r.ints_attr("perm");
      for (int64_t& d : perm)
        if (d < 0) d += r.inputs[0].dim();
      emit(y, "Transpose", {in(0)}, {Attribute::ints("perm", perm)});
    } else if (op == "cat") {
      std::vector<std::string> inputs;
      for (size_t i = 0; i < r.inputs.size(); ++i) inputs.push_back(in(i));
      emit(y, "Concat", inputs, {Attribute::i("axis", r.int_attr("dim"))});
    } else if (op == "softmax" || op == "log_softmax") {
      std::string x = in(0);
      if (r.inputs[0].dtype() != y.dtype()) x = node("Cast", {x}, {Attribute::i("to", onnx_type(y.dtype()))});
      emit(y, op == "softmax" ? "Softmax" : "LogSoftmax", {x}, {Attribute::i("axis", r.int_attr("dim"))});
    } else if (!detail::emit_sequence_op(*this, r) && !detail::emit_transformer_op(*this, r)) {
      throw Error(cohort::detail::str("the forward ran ", op, where_in_module(r), ", which has no ONNX mapping in "
                                      "cohort's exporter; hint: the exported ops are listed in cohort/io/onnx.h"));
    }
  }

  // " in module <path>" for an op that reads a parameter or buffer of the exported module (the first
  // one it reads names the module), so that a refusal says which layer of a large model to change.
  std::string where_in_module(const trace::Record& r) const {
    for (const Tensor& t : r.inputs) {
      if (!t.defined()) continue;
      const std::string name = module_name(t);
      if (name.empty()) continue;
      const auto dot = name.rfind('.');
      return dot == std::string::npos ? " in the exported module itself (its " + name + ")"
                                      : " in module " + name.substr(0, dot) + " (its " + name.substr(dot + 1) + ")";
    }
    return "";
  }

  // The serialised ModelProto, with `x` the graph's input, `y` its output and `metadata` its
  // metadata_props.
  std::string finish(const Tensor& x, const Tensor& y,
                     const std::vector<std::pair<std::string, std::string>>& metadata) {
    auto it = names_.find(y.unsafe_impl());
    COHORT_CHECK(it != names_.end() && produced_.count(it->second), "the output (", y.sizes(),
                 ") does not come from the input through ops the exporter records");
    // The output value is renamed "output" wherever it appears.
    const std::string old = it->second;
    for (Node& n : nodes_) {
      for (std::string& s : n.inputs)
        if (s == old) s = "output";
      for (std::string& s : n.outputs)
        if (s == old) s = "output";
    }
    Writer graph;
    for (const Node& n : nodes_) {
      Writer w;
      for (const std::string& s : n.inputs) w.bytes(1, s);
      for (const std::string& s : n.outputs) w.bytes(2, s);
      w.bytes(3, n.outputs.front());
      w.bytes(4, n.op_type);
      for (const Attribute& a : n.attributes) w.message(5, a.w);
      graph.message(1, w);
    }
    graph.bytes(2, options_.graph_name());
    for (const Writer& init : initializers_) graph.message(5, init);
    // The input's symbolic dimensions: "N" (dynamic_batch) and "T" (dynamic_sequence). The output's
    // first is "N" when it has the input's, or "N*T" for one row per position (a language model's
    // logits [N * T, V]; "N*16" when T is fixed at 16); its second is "T" when it is the input's.
    const bool batch = options_.dynamic_batch() && x.dim() > 0;
    const bool seq = options_.dynamic_sequence() && x.dim() > 1;
    std::vector<std::string> in_dims{batch ? "N" : "", seq ? "T" : ""}, out_dims{"", ""};
    if (y.dim() > 0 && batch && y.size(0) == x.size(0)) {
      out_dims[0] = "N";
      if (seq && y.dim() > 1 && y.size(1) == x.size(1)) out_dims[1] = "T";
    } else if (y.dim() > 0 && batch && x.dim() > 1 && y.size(0) == x.size(0) * x.size(1)) {
      out_dims[0] = seq ? "N*T" : "N*" + std::to_string(x.size(1));
    }
    graph.message(11, value_info("input", x, in_dims));
    graph.message(12, value_info("output", y, out_dims));
    Writer model;
    model.int64(1, options_.opset() <= 13 ? 7 : 8);  // the IR version of the opset's ONNX release
    model.bytes(2, "cohort");
    model.bytes(3, "0.1.0");
    model.message(7, graph);
    Writer opset;
    opset.int64(2, options_.opset());
    model.message(8, opset);
    for (const auto& [key, value] : metadata) {
      Writer entry;  // StringStringEntryProto
      entry.bytes(1, key);
      entry.bytes(2, value);
      model.message(14, entry);
    }
    return model.data();
  }

  // detail::Graph, for the emitters in other files.
  std::string value(const Tensor& t, const std::string& op) override {
    // The name of the value `t` holds: a value made by an earlier node or the input, else a module
    // parameter or buffer (an initializer named after it), else a constant.
    COHORT_CHECK(t.defined(), op, ": an undefined input; this is a bug in the exporter");
    if (auto it = names_.find(t.unsafe_impl()); it != names_.end()) return it->second;
    if (auto it = module_names_.find(t.unsafe_impl()); it != module_names_.end()) {
      initializer(t, it->second);
      bind(t, it->second);
      return it->second;
    }
    // A leaf is a value the forward read (a tensor it holds outside the module's parameters is
    // exported as a constant); a computed value the trace did not see would be baked in wrongly.
    COHORT_CHECK(t.is_leaf(), op, ": an input of shape ", t.sizes(), " was computed from the input or the weights "
                 "by an op that did not report to the tracer (", t.grad_fn() ? t.grad_fn()->name() : "?",
                 "); this is a bug in the exporter");
    return constant(t);
  }

  std::string constant(const Tensor& t, const std::string& given = "") override {
    std::string name = given.empty() ? "const_" + std::to_string(constants_++) : given;
    initializer(t, name);
    bind(t, name);
    return name;
  }

  int64_t opset() const override { return options_.opset(); }

  std::string module_name(const Tensor& t) const override {
    auto it = module_names_.find(t.unsafe_impl());
    return it == module_names_.end() ? std::string() : it->second;
  }

  std::string constant_ints(const std::vector<int64_t>& v) override {
    Tensor t = empty({static_cast<int64_t>(v.size())}, TensorOptions().dtype(kInt64));
    if (!v.empty()) std::memcpy(t.data_ptr(), v.data(), v.size() * sizeof(int64_t));
    return constant(t);
  }

 private:
  void initializer(const Tensor& t, const std::string& name) {
    COHORT_CHECK(onnx_type(t.dtype()) != 0, "cannot export a tensor of dtype ", t.dtype());
    Tensor c = t.detach().contiguous();
    Writer w;
    for (int64_t d : c.sizes()) w.int64(1, d);
    w.int64(2, onnx_type(c.dtype()));
    w.bytes(8, name);
    w.bytes(9, std::string_view(static_cast<const char*>(c.data_ptr()), c.nbytes()));
    initializers_.push_back(std::move(w));
  }

  // `symbols[d]`, when there is one and it is not empty, names dimension d (else its size is fixed).
  Writer value_info(const std::string& name, const Tensor& t, const std::vector<std::string>& symbols) const {
    Writer shape;
    for (int64_t d = 0; d < t.dim(); ++d) {
      Writer dim;
      if (static_cast<size_t>(d) < symbols.size() && !symbols[static_cast<size_t>(d)].empty()) {
        dim.bytes(2, symbols[static_cast<size_t>(d)]);
      } else {
        dim.int64(1, t.size(d));
      }
      shape.message(1, dim);
    }
    Writer tensor_type;
    tensor_type.int64(1, onnx_type(t.dtype()));
    tensor_type.message(2, shape);
    Writer type;
    type.message(1, tensor_type);
    Writer info;
    info.bytes(1, name);
    info.message(2, type);
    return info;
  }

 public:
  std::string node(const std::string& op_type, std::vector<std::string> inputs,
                   std::vector<Attribute> attrs = {}) override {
    std::string out = op_type + "_" + std::to_string(nodes_.size());
    nodes_.push_back(Node{op_type, std::move(inputs), {out}, std::move(attrs)});
    produced_.insert(out);
    return out;
  }
  void emit(const Tensor& y, const std::string& op_type, std::vector<std::string> inputs,
            std::vector<Attribute> attrs = {}) override {
    bind(y, node(op_type, std::move(inputs), std::move(attrs)));
  }

 private:
  // Whether an input of `r` is the graph's input or a node's output (a value known only at run time).
  bool reads_graph_value(const trace::Record& r) const {
    for (const Tensor& t : r.inputs) {
      if (!t.defined()) continue;
      auto it = names_.find(t.unsafe_impl());
      if (it != names_.end() && (it->second == "input" || produced_.count(it->second))) return true;
    }
    return false;
  }

  void bind(const Tensor& t, const std::string& name) {
    names_[t.unsafe_impl()] = name;
    alive_.push_back(t);  // keeps the TensorImpl, so its address names no other tensor
  }

  void add_gelu(const trace::Record& r) {
    const Tensor& x = r.inputs[0];
    const std::string xs = value(x, r.op);
    auto scalar = [&](double v) { return constant(full({}, v, TensorOptions().dtype(x.dtype()))); };
    std::string inner;
    if (r.string_attr("approximate") == "tanh") {
      // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
      std::string cube = node("Mul", {node("Mul", {xs, xs}), xs});
      std::string sum = node("Add", {xs, node("Mul", {cube, scalar(0.044715)})});
      inner = node("Tanh", {node("Mul", {sum, scalar(std::sqrt(2.0 / M_PI))})});
    } else {
      // 0.5 x (1 + erf(x / sqrt(2)))
      inner = node("Erf", {node("Mul", {xs, scalar(M_SQRT1_2)})});
    }
    emit(r.output, "Mul", {node("Mul", {xs, scalar(0.5)}), node("Add", {inner, scalar(1.0)})});
  }

  const OnnxExportOptions& options_;
  std::unordered_map<const TensorImpl*, std::string> module_names_;
  std::unordered_map<const TensorImpl*, std::string> names_;
  std::unordered_set<std::string> produced_;
  std::vector<Tensor> alive_;
  std::vector<Node> nodes_;
  std::vector<Writer> initializers_;
  int64_t constants_ = 0;
};

// OnnxExportOptions::normalize_input as tensors shaped [C, 1, ...] to broadcast along the
// example's dim 1, in its dtype; undefined when the options ask for none.
struct InputNormalization {
  Tensor mean, std;
};

InputNormalization input_normalization(const OnnxExportOptions& options, const Tensor& example) {
  const auto& mean = options.input_mean();
  const auto& stdev = options.input_std();
  if (mean.empty() && stdev.empty()) return {};
  COHORT_CHECK(mean.size() == stdev.size(), "export_onnx: normalize_input needs as many stds as means, got ",
               mean.size(), " means and ", stdev.size(), " stds");
  for (size_t c = 0; c < stdev.size(); ++c)
    COHORT_CHECK(stdev[c] > 0 && std::isfinite(stdev[c]) && std::isfinite(mean[c]), "export_onnx: normalize_input: "
                 "std[", c, "] must be positive and mean[", c, "] finite, got mean ", mean[c], " and std ", stdev[c]);
  const auto channels = static_cast<int64_t>(mean.size());
  COHORT_CHECK(example.dim() >= 2 && example.size(1) == channels, "export_onnx: normalize_input has ", channels,
               " means and stds for dim 1 of the input, but the example input has shape ", example.sizes(),
               "; hint: one value per channel of an [N, C, ...] input, or per feature of an [N, F] table");
  std::vector<int64_t> shape(static_cast<size_t>(example.dim() - 1), 1);
  shape[0] = channels;
  auto make = [&](const std::vector<double>& values) {
    return tensor(values).to(example.dtype()).view(shape);
  };
  return {make(mean), make(stdev)};
}

std::string json_numbers(const std::vector<double>& values) {
  std::string out = "[";
  char buf[32];
  for (size_t i = 0; i < values.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%.9g", values[i]);
    out += (i ? ", " : "") + std::string(buf);
  }
  return out + "]";
}

// The model's metadata_props: the exporter's own entries, then the caller's; keys unique.
std::vector<std::pair<std::string, std::string>> metadata_of(const OnnxExportOptions& options,
                                                             const InputNormalization& norm) {
  std::vector<std::pair<std::string, std::string>> out;
  if (norm.mean.defined())
    out.emplace_back("input_normalization",
                     "{\"inside_graph\": true, \"formula\": \"(input - mean) / std\", \"dim\": 1, \"mean\": " +
                         json_numbers(options.input_mean()) + ", \"std\": " + json_numbers(options.input_std()) + "}");
  for (const auto& [key, value] : options.metadata()) {
    COHORT_CHECK(!key.empty(), "export_onnx: a metadata key is empty (its value is \"", value, "\")");
    for (const auto& [seen, unused] : out)
      COHORT_CHECK(seen != key, "export_onnx: the metadata key \"", key, "\" is given twice",
                   key == "input_normalization" ? " (the exporter writes it for normalize_input)" : "");
    out.emplace_back(key, value);
  }
  return out;
}

}  // namespace

std::string export_onnx_bytes(const nn::Module& module, const std::function<Tensor(const Tensor&)>& forward,
                              const Tensor& example_input, const OnnxExportOptions& options) {
  COHORT_CHECK(options.opset() >= 13 && options.opset() <= 17, "export_onnx: opset must be 13 to 17, got ",
               options.opset());
  COHORT_CHECK(example_input.defined(), "export_onnx: the example input is undefined");
  const bool ids = example_input.dtype() == kInt64;  // token ids, e.g. a language model's [N, T]
  COHORT_CHECK_AS(TypeError, example_input.is_floating_point() || ids, "export_onnx: the example input must be "
                  "float32, float64 or int64 (ids), got ", example_input.dtype());
  COHORT_CHECK(!ids || (options.input_mean().empty() && options.input_std().empty()), "export_onnx: normalize_input "
               "needs a floating-point input, got int64 ids");
  COHORT_CHECK(!options.dynamic_sequence() || (example_input.dim() >= 2 && example_input.size(1) >= 2 &&
                                               example_input.size(0) != example_input.size(1)),
               "export_onnx: dynamic_sequence needs an example input [N, T, ...] with T >= 2 and N != T (so that "
               "the exporter tells the batch from the sequence), got ", example_input.sizes());
  const InputNormalization norm = input_normalization(options, example_input);
  const auto metadata = metadata_of(options, norm);
  // A fresh leaf that requires grad: every differentiable op on it then records an autograd node,
  // which is how an op that does not report is caught (Note [Tracing ops]).
  // Integer ids cannot require grad; the parameters then play that part, as every value the
  // forward computes from ids goes through a weight (an embedding) before any differentiable op.
  Tensor x = example_input.detach().clone();
  if (!ids) x.requires_grad_(true);
  Recorder recorder;
  Tensor y;
  {
    EnableGradGuard grad;
    trace::TracerGuard guard(recorder);
    // The normalisation is traced like the model's own ops: the same sub and div as Normalize's.
    y = norm.mean.defined() ? forward((x - norm.mean) / norm.std) : forward(x);
  }
  COHORT_CHECK(y.defined(), "export_onnx: the forward returned an undefined tensor");
  GraphBuilder graph(module, options);
  graph.bind_input(x, "input");
  if (norm.mean.defined()) {
    graph.name_constant(norm.mean, "input_mean");
    graph.name_constant(norm.std, "input_std");
  }
  for (const trace::Record& r : recorder.records) graph.add(r);
  return graph.finish(x, y, metadata);
}

void export_onnx(const nn::Module& module, const std::function<Tensor(const Tensor&)>& forward,
                 const Tensor& example_input, const std::filesystem::path& path, const OnnxExportOptions& options) {
  std::string bytes;
  try {
    bytes = export_onnx_bytes(module, forward, example_input, options);
  } catch (const Error& e) {
    std::string what = e.what();
    const std::string prefix = "export_onnx: ";
    if (what.rfind(prefix, 0) == 0) what.erase(0, prefix.size());
    throw Error(cohort::detail::str("export_onnx: ", path.string(), ": ", what));
  }
  detail::AtomicWriter out(path, "export_onnx");
  out.write(bytes.data(), bytes.size());
  out.commit();
}

}  // namespace cohort::io
