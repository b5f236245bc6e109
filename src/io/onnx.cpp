// ONNX export: trace the forward pass (cohort/autograd/trace.h), map each recorded op to ONNX nodes, write
// the model with the hand-written protobuf writer (Note [Protobuf by hand] in onnx_proto.h).
#include "cohort/io/onnx.h"

#include <algorithm>
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

std::vector<std::string> onnx_exported_ops() {
  std::vector<std::string> ops;
  for (const auto& [op, emit] : detail::emitters()) ops.push_back(op);
  std::sort(ops.begin(), ops.end());
  return ops;
}

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

  void bind_input(const Tensor& x, const std::string& name) {
    if (inputs_.empty()) first_input_ = x;
    bind(x, name);
    inputs_.insert(name);
  }
  // A tensor the forward reads outside the module, exported as the initializer `name` (not const_<k>).
  void name_constant(const Tensor& t, const std::string& name) { module_names_.emplace(t.unsafe_impl(), name); }

  void add(const trace::Record& r) {
    // An op on constants alone (a causal mask built from an arange) is folded: its output, a leaf,
    // becomes a constant where a later op reads it. One that reads the weights requires grad and is
    // not folded.
    if (!r.output.requires_grad() && !reads_graph_value(r)) return;
    const auto& table = detail::emitters();
    auto it = table.find(r.op);
    if (it == table.end())
      throw Error(cohort::detail::str("the forward ran ", r.op, where_in_module(r), ", which has no ONNX mapping in "
                                      "cohort's exporter; hint: the exported ops are listed in cohort/io/onnx.h"));
    it->second(*this, r);
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

  // The graph's inputs and outputs: each value, its name, and the symbol of each dimension that is
  // dynamic (empty: fixed at the example's size).
  struct Port {
    Tensor value;
    std::string name;
    std::vector<std::string> symbols;
  };

  // The serialised ModelProto, with `inputs` the graph's inputs, `outputs` its outputs and `metadata`
  // its metadata_props.
  std::string finish(const std::vector<Port>& inputs, const std::vector<Port>& outputs,
                     const std::vector<std::pair<std::string, std::string>>& metadata) {
    for (const Port& out : outputs) name_output(out);
    prune();
    for (const auto& [name, init] : initializers_)
      COHORT_CHECK(!inputs_.count(name) && !outputs_.count(name), "the name '", name, "' is both an input or output "
                   "of the graph and a parameter or constant; hint: pick other input_names or output_names");
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
    for (const auto& [name, init] : initializers_) graph.message(5, init);
    for (const Port& in : inputs) graph.message(11, value_info(in.name, in.value, in.symbols));
    for (const Port& out : outputs) graph.message(12, value_info(out.name, out.value, out.symbols));
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
    return options_.slice_sequence_constants() ? sequence_constant(t) : constant(t);
  }

  std::string constant(const Tensor& t, const std::string& given = "") override {
    std::string name = given.empty() ? "const_" + std::to_string(constants_++) : given;
    initializer(t, name);
    bind(t, name);
    return name;
  }

  const OnnxExportOptions& options() const override { return options_; }

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
    initializers_.emplace_back(name, std::move(w));
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
    return node_outputs(op_type, std::move(inputs), std::move(attrs), 1).front();
  }
  std::vector<std::string> node_outputs(const std::string& op_type, std::vector<std::string> inputs,
                                        std::vector<Attribute> attrs, size_t count) override {
    const std::string base = op_type + "_" + std::to_string(nodes_.size());
    std::vector<std::string> outs{base};
    for (size_t k = 1; k < count; ++k) outs.push_back(base + "_" + std::to_string(k));
    nodes_.push_back(Node{op_type, std::move(inputs), outs, std::move(attrs)});
    produced_.insert(outs.begin(), outs.end());
    return outs;
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
      if (it != names_.end() && (inputs_.count(it->second) || produced_.count(it->second))) return true;
    }
    return false;
  }

  // Drops the nodes no output depends on (a recurrent layer's final states that the forward did not
  // return) and the initializers only they read.
  void prune() {
    std::unordered_set<std::string> live(outputs_.begin(), outputs_.end());
    std::vector<Node> kept;
    for (auto n = nodes_.rbegin(); n != nodes_.rend(); ++n) {
      auto is_live = [&](const std::string& o) { return live.count(o) > 0; };
      if (std::none_of(n->outputs.begin(), n->outputs.end(), is_live)) continue;
      live.insert(n->inputs.begin(), n->inputs.end());
      kept.push_back(std::move(*n));
    }
    nodes_.assign(std::make_move_iterator(kept.rbegin()), std::make_move_iterator(kept.rend()));
    initializers_.erase(std::remove_if(initializers_.begin(), initializers_.end(),
                                       [&](const auto& init) { return !live.count(init.first); }),
                        initializers_.end());
  }

  // OnnxExportOptions::slice_sequence_constants: a constant with dimensions of the example's length T
  // is the first T of a table (positions, a causal mask), sliced along them to the input's length.
  std::string sequence_constant(const Tensor& t) {
    const int64_t T = first_input_.size(1);
    std::vector<int64_t> axes;
    for (int64_t d = 0; d < t.dim(); ++d)
      if (t.size(d) == T) axes.push_back(d);
    const std::string table = constant(t);
    if (axes.empty()) return table;
    if (sequence_length_.empty()) {
      // [T] of the first input, at run time.
      sequence_length_ = node("Slice", {node("Shape", {value(first_input_, "input")}), constant_ints({1}),
                                        constant_ints({2})});
    }
    std::vector<std::string> ends(axes.size(), sequence_length_);
    const std::string end = axes.size() == 1 ? ends[0] : node("Concat", ends, {Attribute::i("axis", 0)});
    const std::string sliced =
        node("Slice", {table, constant_ints(std::vector<int64_t>(axes.size(), 0)), end, constant_ints(axes)});
    bind(t, sliced);
    return sliced;
  }

  // The output `out` gets its name: the node that computes it is renamed, or, for a value that is
  // already a graph input or an earlier output, an Identity node copies it.
  void name_output(const Port& out) {
    auto it = names_.find(out.value.unsafe_impl());
    COHORT_CHECK(it != names_.end() && (produced_.count(it->second) || inputs_.count(it->second)), "the output '",
                 out.name, "' (", out.value.sizes(), ") does not come from the inputs through ops the exporter records");
    const std::string old = it->second;
    if (inputs_.count(old) || outputs_.count(old)) {
      nodes_.push_back(Node{"Identity", {old}, {out.name}, {}});
    } else {
      for (Node& n : nodes_) {
        for (std::string& s : n.inputs)
          if (s == old) s = out.name;
        for (std::string& s : n.outputs)
          if (s == old) s = out.name;
      }
      it->second = out.name;
    }
    outputs_.insert(out.name);
  }

 public:
  void bind(const Tensor& t, const std::string& name) override {
    names_[t.unsafe_impl()] = name;
    alive_.push_back(t);  // keeps the TensorImpl, so its address names no other tensor
  }

 private:
  const OnnxExportOptions& options_;
  std::unordered_map<const TensorImpl*, std::string> module_names_;
  std::unordered_map<const TensorImpl*, std::string> names_;
  std::unordered_set<std::string> produced_;
  std::vector<Tensor> alive_;
  std::vector<Node> nodes_;
  std::vector<std::pair<std::string, Writer>> initializers_;
  std::unordered_set<std::string> inputs_, outputs_;  // the graph's input and output names
  Tensor first_input_;
  std::string sequence_length_;  // the node giving the first input's [T], once made
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

// The symbols of each dimension of the port `name`: its dynamic_axes entry when there is one, else for
// the first input and every output the dynamic_batch / dynamic_sequence rule (the output's first
// dimension is "N" when it has the first input's, or "N*T" for one row per position, a language
// model's logits [N * T, V]; "N*16" when T is fixed at 16; its second is "T" when it is the input's),
// and for other inputs none.
std::vector<std::string> symbols_of(const OnnxExportOptions& options, const std::string& name, const Tensor& t,
                                    const Tensor& x, bool follows_rule) {
  std::vector<std::string> symbols(static_cast<size_t>(t.dim()));
  for (const auto& [port, axes] : options.dynamic_axes()) {
    if (port != name) continue;
    for (const auto& [d, symbol] : axes) {
      COHORT_CHECK(d >= 0 && d < t.dim(), "export_onnx: dynamic_axes of '", name, "' names dimension ", d, ", but '",
                   name, "' has shape ", t.sizes());
      COHORT_CHECK(!symbol.empty(), "export_onnx: dynamic_axes of '", name, "': dimension ", d, " has an empty symbol");
      symbols[static_cast<size_t>(d)] = symbol;
    }
    return symbols;
  }
  if (!follows_rule || t.dim() == 0) return symbols;
  const bool batch = options.dynamic_batch() && x.dim() > 0;
  const bool seq = options.dynamic_sequence() && x.dim() > 1;
  if (t.unsafe_impl() == x.unsafe_impl()) {
    if (batch) symbols[0] = "N";
    if (seq) symbols[1] = "T";
  } else if (batch && t.size(0) == x.size(0)) {
    symbols[0] = "N";
    if (seq && t.dim() > 1 && t.size(1) == x.size(1)) symbols[1] = "T";
  } else if (batch && x.dim() > 1 && t.size(0) == x.size(0) * x.size(1)) {
    symbols[0] = seq ? "N*T" : "N*" + std::to_string(x.size(1));
  }
  return symbols;
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "'" : ", '") + n + "'";
  return out;
}

// The name of port k of `count`: the given one, else `base` for the first and `base_<k>` after.
std::vector<std::string> port_names(const std::vector<std::string>& given, size_t count, const std::string& base) {
  if (!given.empty()) {
    COHORT_CHECK(given.size() == count, "export_onnx: ", base, "_names has ", given.size(), " names for ", count, " ",
                 base, count == 1 ? "" : "s");
    return given;
  }
  std::vector<std::string> names{base};
  for (size_t k = 1; k < count; ++k) names.push_back(base + "_" + std::to_string(k));
  return names;
}

}  // namespace

std::string export_onnx_bytes(const nn::Module& module, const MultiForward& forward,
                              const std::vector<Tensor>& example_inputs, const OnnxExportOptions& options) {
  COHORT_CHECK(options.opset() >= 13 && options.opset() <= 17, "export_onnx: opset must be 13 to 17, got ",
               options.opset());
  COHORT_CHECK(!example_inputs.empty(), "export_onnx: no example input; hint: one tensor per input of the graph");
  for (size_t k = 0; k < example_inputs.size(); ++k) {
    const Tensor& t = example_inputs[k];
    COHORT_CHECK(t.defined(), "export_onnx: example input ", k, " is undefined");
    COHORT_CHECK_AS(TypeError, t.is_floating_point() || t.dtype() == kInt64, "export_onnx: example input ", k,
                    " must be float32, float64 or int64 (ids), got ", t.dtype());
  }
  const Tensor& first = example_inputs.front();
  const bool ids = first.dtype() == kInt64;  // token ids, e.g. a language model's [N, T]
  COHORT_CHECK(!ids || (options.input_mean().empty() && options.input_std().empty()), "export_onnx: normalize_input "
               "needs a floating-point input, got int64 ids");
  COHORT_CHECK(!options.slice_sequence_constants() || options.dynamic_sequence(), "export_onnx: "
               "slice_sequence_constants needs dynamic_sequence");
  COHORT_CHECK(!options.dynamic_sequence() || (first.dim() >= 2 && first.size(1) >= 2 && first.size(0) != first.size(1)),
               "export_onnx: dynamic_sequence needs an example input [N, T, ...] with T >= 2 and N != T (so that "
               "the exporter tells the batch from the sequence), got ", first.sizes());
  const std::vector<std::string> in_names = port_names(options.input_names(), example_inputs.size(), "input");
  const InputNormalization norm = input_normalization(options, first);
  const auto metadata = metadata_of(options, norm);
  // Fresh leaves that require grad: every differentiable op on them then records an autograd node,
  // which is how an op that does not report is caught (Note [Tracing ops]).
  // Integer ids cannot require grad; the parameters then play that part, as every value the
  // forward computes from ids goes through a weight (an embedding) before any differentiable op.
  std::vector<Tensor> xs;
  for (const Tensor& t : example_inputs) {
    xs.push_back(t.detach().clone());
    if (t.is_floating_point()) xs.back().requires_grad_(true);
  }
  Recorder recorder;
  std::vector<Tensor> ys;
  {
    EnableGradGuard grad;
    trace::TracerGuard guard(recorder);
    // The normalisation is traced like the model's own ops: the same sub and div as Normalize's.
    std::vector<Tensor> args = xs;
    if (norm.mean.defined()) args[0] = (xs[0] - norm.mean) / norm.std;
    ys = forward(args);
  }
  COHORT_CHECK(!ys.empty(), "export_onnx: the forward returned no tensor");
  for (size_t k = 0; k < ys.size(); ++k)
    COHORT_CHECK(ys[k].defined(), "export_onnx: output ", k, " of the forward is an undefined tensor");
  const std::vector<std::string> out_names = port_names(options.output_names(), ys.size(), "output");
  std::vector<std::string> all = in_names;
  all.insert(all.end(), out_names.begin(), out_names.end());
  for (size_t k = 0; k < all.size(); ++k) {
    COHORT_CHECK(!all[k].empty(), "export_onnx: an input or output name is empty");
    for (size_t m = 0; m < k; ++m)
      COHORT_CHECK(all[m] != all[k], "export_onnx: the name '", all[k], "' is given to two inputs or outputs");
  }
  for (const auto& [port, axes] : options.dynamic_axes())
    COHORT_CHECK(std::find(all.begin(), all.end(), port) != all.end(), "export_onnx: dynamic_axes names '", port,
                 "', which is no input or output of the graph (they are ", quoted_list(all), ")");

  GraphBuilder graph(module, options);
  std::vector<GraphBuilder::Port> inputs, outputs;
  for (size_t k = 0; k < xs.size(); ++k) {
    graph.bind_input(xs[k], in_names[k]);
    inputs.push_back({xs[k], in_names[k], symbols_of(options, in_names[k], xs[k], xs[0], k == 0)});
  }
  if (norm.mean.defined()) {
    graph.name_constant(norm.mean, "input_mean");
    graph.name_constant(norm.std, "input_std");
  }
  for (const trace::Record& r : recorder.records) graph.add(r);
  for (size_t k = 0; k < ys.size(); ++k)
    outputs.push_back({ys[k], out_names[k], symbols_of(options, out_names[k], ys[k], xs[0], true)});
  return graph.finish(inputs, outputs, metadata);
}

std::string export_onnx_bytes(const nn::Module& module, const std::function<Tensor(const Tensor&)>& forward,
                              const Tensor& example_input, const OnnxExportOptions& options) {
  COHORT_CHECK(example_input.defined(), "export_onnx: the example input is undefined");
  return export_onnx_bytes(
      module, [&](const std::vector<Tensor>& x) { return std::vector<Tensor>{forward(x[0])}; }, {example_input},
      options);
}

void export_onnx(const nn::Module& module, const MultiForward& forward, const std::vector<Tensor>& example_inputs,
                 const std::filesystem::path& path, const OnnxExportOptions& options) {
  std::string bytes;
  try {
    bytes = export_onnx_bytes(module, forward, example_inputs, options);
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

void export_onnx(const nn::Module& module, const std::function<Tensor(const Tensor&)>& forward,
                 const Tensor& example_input, const std::filesystem::path& path, const OnnxExportOptions& options) {
  COHORT_CHECK(example_input.defined(), "export_onnx: ", path.string(), ": the example input is undefined");
  export_onnx(
      module, [&](const std::vector<Tensor>& x) { return std::vector<Tensor>{forward(x[0])}; }, {example_input}, path,
      options);
}

}  // namespace cohort::io
