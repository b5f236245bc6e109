// Op-table rows for the activations of ops/activation.h and nn::functional's softmin: the exponential
// family (elu, selu, celu, softplus, mish, log_sigmoid), softsign, tanhshrink, the piecewise ones
// (hardtanh, relu6, hardsigmoid, hardswish, the shrinks, threshold, rrelu in evaluation), prelu and glu. A piecewise op with
// two kinks has two rows whose domains put the kinks at the range's ends and centre, which the
// domain's grid never comes near (support/op_table.h), so each piece is checked. References are
// written with PyTorch 1.13's values for NaN and inf, and every row runs with them.
#include <algorithm>
#include <cmath>

#include "cohort/nn/functional/activation.h"
#include "cohort/ops/activation.h"
#include "support/op_table.h"

namespace cohort::testing {
namespace {

namespace F = nn::functional;
using F1 = std::function<double(double)>;

const std::vector<std::vector<Shape>> kUnary = {{{2, 3}}, {{}}, {{2, 1, 4}}};

OpRow unary(std::string name, std::function<Tensor(const Tensor&)> op, F1 f, Domain domain = {}) {
  return {.name = std::move(name),
          .samples = kUnary,
          .op = [op](const In& x) { return Out{op(x[0])}; },
          .ref = [f](const Refs& x) { return Refs{map(x[0], f)}; },
          .domains = {domain},
          .specials = true};
}

// x > 0 ? x scale : alpha scale (exp(x input_scale) - 1); NaN takes the second branch.
F1 elu_ref(double alpha, double scale, double input_scale) {
  return [=](double v) { return v > 0 ? v * scale : alpha * scale * (std::exp(v * input_scale) - 1); };
}
double softplus_ref(double v, double beta, double threshold) {
  return v * beta > threshold ? v : std::log1p(std::exp(v * beta)) / beta;
}
double clamp_ref(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

std::vector<OpRow> activation_rows() {
  const double kSeluAlpha = 1.6732632423543772848170429916717, kSeluScale = 1.0507009873554804934193349852946;
  std::vector<OpRow> rows = {
      unary("elu", [](auto& x) { return elu(x); }, elu_ref(1, 1, 1)),
      unary("elu_alpha_scale", [](auto& x) { return elu(x, 0.5, 2, 1.5); }, elu_ref(0.5, 2, 1.5)),
      unary("selu", [](auto& x) { return selu(x); }, elu_ref(kSeluAlpha, kSeluScale, 1)),
      unary("celu", [](auto& x) { return celu(x, 2.0); }, elu_ref(2.0, 1, 0.5)),
      unary("softplus", [](auto& x) { return softplus(x); }, [](double v) { return softplus_ref(v, 1, 20); }),
      // beta 2, threshold 3: the switch to x at 1.5 is the centre of the range.
      unary("softplus_threshold", [](auto& x) { return softplus(x, 2, 3); },
            [](double v) { return softplus_ref(v, 2, 3); }, real(-1.5, 4.5)),
      unary("mish", [](auto& x) { return mish(x); },
            [](double v) { return v * std::tanh(std::log1p(std::exp(v))); }, real(-3, 3)),
      unary("log_sigmoid", [](auto& x) { return log_sigmoid(x); },
            [](double v) { return v < 0 ? v - std::log1p(std::exp(v)) : -std::log1p(std::exp(-v)); }, real(-4, 4)),
      unary("softsign", [](auto& x) { return softsign(x); }, [](double v) { return v / (1 + std::abs(v)); }),
      unary("tanhshrink", [](auto& x) { return tanhshrink(x); }, [](double v) { return v - std::tanh(v); }),

      unary("hardtanh_low", [](auto& x) { return hardtanh(x); }, [](double v) { return clamp_ref(v, -1, 1); },
            real(-3, 1)),
      unary("hardtanh_high", [](auto& x) { return hardtanh(x, -1, 2); }, [](double v) { return clamp_ref(v, -1, 2); },
            real(-1, 5)),
      unary("relu6_low", [](auto& x) { return relu6(x); }, [](double v) { return clamp_ref(v, 0, 6); }, real(-6, 6)),
      unary("relu6_high", [](auto& x) { return relu6(x); }, [](double v) { return clamp_ref(v, 0, 6); }, real(0, 12)),
      unary("hardsigmoid_low", [](auto& x) { return hardsigmoid(x); },
            [](double v) { return clamp_ref(v + 3, 0, 6) / 6; }, real(-9, 3)),
      unary("hardsigmoid_high", [](auto& x) { return hardsigmoid(x); },
            [](double v) { return clamp_ref(v + 3, 0, 6) / 6; }, real(-3, 9)),
      // -inf gives NaN (-inf times 0), as PyTorch's kernel.
      unary("hardswish_low", [](auto& x) { return hardswish(x); },
            [](double v) { return v * clamp_ref(v + 3, 0, 6) / 6; }, real(-9, 3)),
      unary("hardswish_high", [](auto& x) { return hardswish(x); },
            [](double v) { return v * clamp_ref(v + 3, 0, 6) / 6; }, real(-3, 9)),
      // NaN gives 0 (PyTorch 1.13).
      unary("softshrink_low", [](auto& x) { return softshrink(x); },
            [](double v) { return v > 0.5 ? v - 0.5 : v < -0.5 ? v + 0.5 : 0.0; }, real(-1.5, 0.5)),
      unary("softshrink_high", [](auto& x) { return softshrink(x, 0.25); },
            [](double v) { return v > 0.25 ? v - 0.25 : v < -0.25 ? v + 0.25 : 0.0; }, real(-0.25, 0.75)),
      unary("hardshrink_low", [](auto& x) { return hardshrink(x); },
            [](double v) { return v >= -0.5 && v <= 0.5 ? 0.0 : v; }, real(-1.5, 0.5)),
      unary("hardshrink_high", [](auto& x) { return hardshrink(x, 0.25); },
            [](double v) { return v >= -0.25 && v <= 0.25 ? 0.0 : v; }, real(-0.25, 0.75)),
      unary("threshold", [](auto& x) { return threshold(x, 0.5, 2.0); }, [](double v) { return v <= 0.5 ? 2.0 : v; },
            real(-0.5, 1.5)),
      unary("f_threshold", [](auto& x) { return F::threshold(x, F::ThresholdFuncOptions(-0.5, -3)); },
            [](double v) { return v <= -0.5 ? -3.0 : v; }, real(-1.5, 0.5)),

      // One weight per channel (dim 1), or one for all; 0-d and 1-d inputs have one channel.
      {.name = "prelu",
       .samples = {{{2, 3, 4}, {3}}, {{2, 3}, {1}}, {{}, {1}}, {{5}, {1}}, {{2, 3}, {}}, {{2, 2, 3, 2}, {2}}},
       .op = [](const In& x) { return Out{prelu(x[0], x[1])}; },
       .ref = [](const Refs& x) {
         const Nd& w = x[1];
         return Refs{build(x[0].shape, [&](const std::vector<int64_t>& i) {
           const double v = x[0].at(i);
           const double slope = w.numel() == 1 ? w.v[0] : w.v[i[1]];
           return v > 0 ? v : slope * v;
         })};
       },
       .specials = true},

      // Evaluation mode: leaky_relu with the mean slope (training draws slopes: tests/nn).
      unary("rrelu_eval", [](auto& x) { return rrelu(x, 0.1, 0.3); }, [](double v) { return v > 0 ? v : 0.2 * v; }),
      {.name = "glu",
       .samples = {{{2, 4}}, {{3, 2, 5}}, {{6}}},
       .op = [](const In& x) { return Out{x[0].dim() == 3 ? glu(x[0], 1) : glu(x[0])}; },
       .ref = [](const Refs& x) {
         const int64_t d = x[0].dim() == 3 ? 1 : x[0].dim() - 1, half = x[0].size(d) / 2;
         Shape shape = x[0].shape;
         shape[d] = half;
         return Refs{build(shape, [&](const std::vector<int64_t>& i) {
           std::vector<int64_t> j = i;
           j[d] += half;
           return x[0].at(i) / (1 + std::exp(-x[0].at(j)));
         })};
       },
       .specials = true},
      {.name = "softmin",
       .samples = {{{2, 3}}, {{2, 3, 4}}},
       .op = [](const In& x) { return Out{F::softmin(x[0], F::SoftminFuncOptions(1))}; },
       .ref = [](const Refs& x) {
         return Refs{along(x[0], 1, [](const std::vector<double>& g) {
           double total = 0;
           std::vector<double> out(g.size());
           for (size_t k = 0; k < g.size(); ++k) total += out[k] = std::exp(-g[k]);
           for (double& o : out) o /= total;
           return out;
         })};
       }},
  };
  return rows;
}
COHORT_OP_ROWS("activation", activation_rows);

}  // namespace
}  // namespace cohort::testing
