// ONNX emitters for the layers' ops: convolution, linear maps and matrix products, batch norm, the
// pools and softmax.
#include <string>
#include <vector>

#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "io/onnx_graph.h"

namespace cohort::io::detail {

namespace {

void check_batched(const trace::Record& r, int64_t dims) {
  COHORT_CHECK(r.inputs[0].dim() == dims, r.op, ": an unbatched input (", r.inputs[0].sizes(),
               ") cannot be exported; hint: unsqueeze(0) it");
}

void emit_conv(Graph& g, const trace::Record& r) {
  const Tensor& w = r.inputs[1];
  check_batched(r, w.dim());
  std::vector<std::string> inputs{g.value(r.inputs[0], r.op), g.value(w, r.op)};
  if (r.inputs[2].defined()) inputs.push_back(g.value(r.inputs[2], r.op));
  std::vector<int64_t> kernel(w.sizes().begin() + 2, w.sizes().end());
  g.emit(r.output, "Conv", inputs,
         {Attribute::ints("kernel_shape", kernel), Attribute::ints("strides", r.ints_attr("strides")),
          Attribute::ints("pads", r.ints_attr("pads")), Attribute::ints("dilations", r.ints_attr("dilations")),
          Attribute::i("group", r.int_attr("groups"))});
}

// y = x w^T + b: one Gemm for a matrix, else a MatMul with the transposed weight (and an Add).
void emit_linear(Graph& g, const trace::Record& r) {
  const std::string x = g.value(r.inputs[0], r.op), w = g.value(r.inputs[1], r.op);
  const bool has_bias = r.inputs[2].defined();
  if (r.inputs[0].dim() == 2) {
    std::vector<std::string> inputs{x, w};
    if (has_bias) inputs.push_back(g.value(r.inputs[2], r.op));
    g.emit(r.output, "Gemm", inputs, {Attribute::i("transB", 1)});
    return;
  }
  const std::string wt = g.node("Transpose", {w}, {Attribute::ints("perm", {1, 0})});
  if (!has_bias) {
    g.emit(r.output, "MatMul", {x, wt});
  } else {
    g.emit(r.output, "Add", {g.node("MatMul", {x, wt}), g.value(r.inputs[2], r.op)});
  }
}

void emit_batch_norm(Graph& g, const trace::Record& r) {
  const Tensor& x = r.inputs[0];
  const int64_t c = x.size(1);
  // An absent weight is ones and an absent bias zeros (batch norm without affine).
  auto per_channel = [&](size_t i, double fill) {
    return r.inputs[i].defined() ? g.value(r.inputs[i], r.op)
                                 : g.constant(full({c}, fill, TensorOptions().dtype(x.dtype())));
  };
  g.emit(r.output, "BatchNormalization",
         {g.value(x, r.op), per_channel(1, 1.0), per_channel(2, 0.0), g.value(r.inputs[3], r.op),
          g.value(r.inputs[4], r.op)},
         {Attribute::f("epsilon", r.float_attr("eps"))});
}

void emit_pool(Graph& g, const trace::Record& r) {
  check_batched(r, 4);
  const auto& pad = r.ints_attr("padding");
  std::vector<Attribute> attrs{Attribute::ints("kernel_shape", r.ints_attr("kernel_size")),
                               Attribute::ints("strides", r.ints_attr("stride")),
                               Attribute::ints("pads", {pad[0], pad[1], pad[0], pad[1]})};
  if (r.int_attr("ceil_mode")) attrs.push_back(Attribute::i("ceil_mode", 1));
  if (r.op == "max_pool2d") {
    const auto& dilation = r.ints_attr("dilation");
    if (dilation[0] != 1 || dilation[1] != 1) attrs.push_back(Attribute::ints("dilations", dilation));
    g.emit(r.output, "MaxPool", {g.value(r.inputs[0], r.op)}, std::move(attrs));
  } else {
    if (r.int_attr("count_include_pad") && (pad[0] || pad[1])) attrs.push_back(Attribute::i("count_include_pad", 1));
    g.emit(r.output, "AveragePool", {g.value(r.inputs[0], r.op)}, std::move(attrs));
  }
}

// A global pool, or a fixed window when the output size divides the input's.
void emit_adaptive_pool(Graph& g, const trace::Record& r) {
  check_batched(r, 4);
  const Tensor& x = r.inputs[0];
  const Tensor& y = r.output;
  const bool avg = r.op == "adaptive_avg_pool2d";
  if (y.size(2) == 1 && y.size(3) == 1) {
    g.emit(y, avg ? "GlobalAveragePool" : "GlobalMaxPool", {g.value(x, r.op)});
    return;
  }
  COHORT_CHECK(x.size(2) % y.size(2) == 0 && x.size(3) % y.size(3) == 0, r.op, ": output size ", y.size(2), "x",
               y.size(3), " does not divide the input ", x.sizes(), ", which ONNX's fixed-window pools cannot "
               "represent; hint: pick an output size that divides the input's");
  const std::vector<int64_t> k{x.size(2) / y.size(2), x.size(3) / y.size(3)};
  g.emit(y, avg ? "AveragePool" : "MaxPool", {g.value(x, r.op)},
         {Attribute::ints("kernel_shape", k), Attribute::ints("strides", k)});
}

void emit_softmax(Graph& g, const trace::Record& r) {
  std::string x = g.value(r.inputs[0], r.op);
  if (r.inputs[0].dtype() != r.output.dtype())
    x = g.node("Cast", {x}, {Attribute::i("to", onnx_type(r.output.dtype()))});
  g.emit(r.output, r.op == "softmax" ? "Softmax" : "LogSoftmax", {x}, {Attribute::i("axis", r.int_attr("dim"))});
}

void emit_matmul(Graph& g, const trace::Record& r) {
  g.emit(r.output, "MatMul", {g.value(r.inputs[0], r.op), g.value(r.inputs[1], r.op)});
}

}  // namespace

EmitterList layer_emitters() {
  return {
      {"conv1d", emit_conv},
      {"conv2d", emit_conv},
      {"linear", emit_linear},
      {"matmul", emit_matmul},
      {"mm", emit_matmul},
      {"addmm", [](Graph& g, const trace::Record& r) {
         g.emit(r.output, "Gemm", {g.value(r.inputs[1], r.op), g.value(r.inputs[2], r.op), g.value(r.inputs[0], r.op)},
                {Attribute::f("alpha", r.float_attr("alpha")), Attribute::f("beta", r.float_attr("beta"))});
       }},
      {"batch_norm", emit_batch_norm},
      {"max_pool2d", emit_pool},
      {"avg_pool2d", emit_pool},
      {"adaptive_avg_pool2d", emit_adaptive_pool},
      {"adaptive_max_pool2d", emit_adaptive_pool},
      {"softmax", emit_softmax},
      {"log_softmax", emit_softmax},
  };
}

}  // namespace cohort::io::detail
