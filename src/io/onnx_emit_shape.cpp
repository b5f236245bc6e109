// ONNX emitters for the ops that move values without computing: reshape, flatten, permute, cat, clone,
// and the in-place unsqueeze_, squeeze_, transpose_ and t_.
#include <string>
#include <vector>

#include "io/onnx_graph.h"

namespace cohort::io::detail {

namespace {

void emit_reshape(Graph& g, const trace::Record& r) {
  const Tensor& x = r.inputs[0];
  const Tensor& y = r.output;
  std::vector<int64_t> shape = r.ints_attr("shape");
  // Keep the batch dynamic: a first dimension the reshape leaves alone is copied from the input (0).
  if (g.options().dynamic_batch() && x.dim() > 0 && y.dim() > 0 && !shape.empty() && shape[0] != -1 &&
      y.size(0) == x.size(0))
    shape[0] = 0;
  // Likewise the sequence's length, behind a batch that is kept ([N, T, C] -> [N, T, h, d]).
  if (g.options().dynamic_sequence() && shape.size() > 1 && shape[0] == 0 && x.dim() > 1 && y.dim() > 1 &&
      shape[1] != -1 && y.size(1) == x.size(1))
    shape[1] = 0;
  g.emit(y, "Reshape", {g.value(x, r.op), g.constant_ints(shape)});
}

// flatten(start, end) keeps the dims before start (0: copied) and after end, -1 between.
void emit_flatten(Graph& g, const trace::Record& r) {
  const Tensor& x = r.inputs[0];
  const int64_t s = r.int_attr("start_dim"), e = r.int_attr("end_dim");
  std::vector<int64_t> shape(static_cast<size_t>(s), 0);
  shape.push_back(-1);
  for (int64_t d = e + 1; d < x.dim(); ++d) shape.push_back(x.size(d));
  g.emit(r.output, "Reshape", {g.value(x, r.op), g.constant_ints(shape)});
}

void emit_permute(Graph& g, const trace::Record& r) {
  std::vector<int64_t> perm = r.ints_attr("perm");
  for (int64_t& d : perm)
    if (d < 0) d += r.inputs[0].dim();
  g.emit(r.output, "Transpose", {g.value(r.inputs[0], r.op)}, {Attribute::ints("perm", perm)});
}

void emit_cat(Graph& g, const trace::Record& r) {
  std::vector<std::string> inputs;
  for (const Tensor& t : r.inputs) inputs.push_back(g.value(t, r.op));
  g.emit(r.output, "Concat", inputs, {Attribute::i("axis", r.int_attr("dim"))});
}

// The in-place shape ops record the tensor as input and output (the same TensorImpl): value() names
// what it held before, emit() what it holds after.
void emit_unsqueeze_inplace(Graph& g, const trace::Record& r) {
  g.emit(r.output, "Unsqueeze", {g.value(r.inputs[0], r.op), g.constant_ints(r.ints_attr("dims"))});
}

void emit_squeeze_inplace(Graph& g, const trace::Record& r) {
  const auto& dims = r.ints_attr("dims");
  const std::string x = g.value(r.inputs[0], r.op);
  if (dims.empty()) {
    g.emit(r.output, "Identity", {x});
  } else {
    g.emit(r.output, "Squeeze", {x, g.constant_ints(dims)});
  }
}

void emit_transpose_inplace(Graph& g, const trace::Record& r) {
  g.emit(r.output, "Transpose", {g.value(r.inputs[0], r.op)}, {Attribute::ints("perm", r.ints_attr("perm"))});
}

}  // namespace

EmitterList shape_emitters() {
  return {{"reshape", emit_reshape},
          {"flatten", emit_flatten},
          {"permute", emit_permute},
          {"cat", emit_cat},
          {"unsqueeze_", emit_unsqueeze_inplace},
          {"squeeze_", emit_squeeze_inplace},
          {"transpose_", emit_transpose_inplace},
          {"t_", emit_transpose_inplace},
          {"clone", [](Graph& g, const trace::Record& r) {
             g.emit(r.output, "Identity", {g.value(r.inputs[0], r.op)});
           }}};
}

}  // namespace cohort::io::detail
