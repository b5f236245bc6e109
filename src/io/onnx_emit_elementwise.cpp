// ONNX emitters for the pointwise ops: unary maths, the activations, and the binary arithmetic (whose
// operands ONNX does not promote, so mixed dtypes are refused).
#include <cmath>
#include <string>
#include <vector>

#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "io/onnx_graph.h"

namespace cohort::io::detail {

namespace {

// An op that is one ONNX node of the same inputs.
Emitter same_inputs(const char* onnx_op) {
  return [onnx_op](Graph& g, const trace::Record& r) {
    std::vector<std::string> inputs;
    for (const Tensor& t : r.inputs) inputs.push_back(g.value(t, r.op));
    g.emit(r.output, onnx_op, inputs);
  };
}

std::string scalar(Graph& g, double v, DType dtype) { return g.constant(full({}, v, TensorOptions().dtype(dtype))); }

void emit_gelu(Graph& g, const trace::Record& r) {
  const Tensor& x = r.inputs[0];
  const std::string xs = g.value(x, r.op);
  std::string inner;
  if (r.string_attr("approximate") == "tanh") {
    // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
    const std::string cube = g.node("Mul", {g.node("Mul", {xs, xs}), xs});
    const std::string sum = g.node("Add", {xs, g.node("Mul", {cube, scalar(g, 0.044715, x.dtype())})});
    inner = g.node("Tanh", {g.node("Mul", {sum, scalar(g, std::sqrt(2.0 / M_PI), x.dtype())})});
  } else {
    // 0.5 x (1 + erf(x / sqrt(2)))
    inner = g.node("Erf", {g.node("Mul", {xs, scalar(g, M_SQRT1_2, x.dtype())})});
  }
  g.emit(r.output, "Mul",
         {g.node("Mul", {xs, scalar(g, 0.5, x.dtype())}), g.node("Add", {inner, scalar(g, 1.0, x.dtype())})});
}

// a op b, numbers included (a traced scalar is a 0-d constant); add and sub scale b by alpha.
Emitter binary(const char* onnx_op) {
  return [onnx_op](Graph& g, const trace::Record& r) {
    const Tensor& a = r.inputs[0];
    const Tensor& b = r.inputs[1];
    COHORT_CHECK(a.dtype() == b.dtype() || r.op == "pow", r.op, ": operands of dtypes ", a.dtype(), " and ",
                 b.dtype(), " cannot be exported (ONNX does not promote); hint: convert one with .to()");
    std::string rhs = g.value(b, r.op);
    const double alpha = r.float_attr("alpha");
    if ((r.op == "add" || r.op == "sub") && alpha != 1) rhs = g.node("Mul", {rhs, scalar(g, alpha, b.dtype())});
    g.emit(r.output, onnx_op, {g.value(a, r.op), rhs});
  };
}

}  // namespace

EmitterList elementwise_emitters() {
  return {
      {"relu", same_inputs("Relu")},
      {"sigmoid", same_inputs("Sigmoid")},
      {"tanh", same_inputs("Tanh")},
      {"exp", same_inputs("Exp")},
      {"log", same_inputs("Log")},
      {"sqrt", same_inputs("Sqrt")},
      {"abs", same_inputs("Abs")},
      {"neg", same_inputs("Neg")},
      {"erf", same_inputs("Erf")},
      {"reciprocal", same_inputs("Reciprocal")},
      {"sin", same_inputs("Sin")},
      {"cos", same_inputs("Cos")},
      {"square", [](Graph& g, const trace::Record& r) {
         const std::string x = g.value(r.inputs[0], r.op);
         g.emit(r.output, "Mul", {x, x});
       }},
      {"rsqrt", [](Graph& g, const trace::Record& r) {
         g.emit(r.output, "Reciprocal", {g.node("Sqrt", {g.value(r.inputs[0], r.op)})});
       }},
      {"leaky_relu", [](Graph& g, const trace::Record& r) {
         g.emit(r.output, "LeakyRelu", {g.value(r.inputs[0], r.op)},
                {Attribute::f("alpha", r.float_attr("negative_slope"))});
       }},
      {"silu", [](Graph& g, const trace::Record& r) {
         const std::string x = g.value(r.inputs[0], r.op);
         g.emit(r.output, "Mul", {x, g.node("Sigmoid", {x})});
       }},
      {"gelu", emit_gelu},
      {"add", binary("Add")},
      {"sub", binary("Sub")},
      {"mul", binary("Mul")},
      {"div", binary("Div")},
      {"pow", binary("Pow")},
      {"maximum", binary("Max")},
      {"minimum", binary("Min")},
  };
}

}  // namespace cohort::io::detail
