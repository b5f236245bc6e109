// Op-table rows for the elementwise ops: arithmetic (tensor and scalar forms, alpha), pow,
// maximum/minimum, unary math, clamps, where/masked_fill and comparisons. References are plain
// loops over broadcast indices (support/op_table.h: map, map2, where_nd), written with PyTorch's
// semantics for NaN and inf: every row here also runs with special values (the std:: functions give
// IEEE/C99 results, which PyTorch 1.13 shares for these ops; tests/fixtures/specials.json pins the
// rows where NaN needs a rule).
#include <cmath>
#include <limits>

#include "cohort/ops/pointwise.h"
#include "support/op_table.h"

namespace cohort::testing {
namespace {

using S = std::vector<std::vector<Shape>>;
using F1 = std::function<double(double)>;
using F2 = std::function<double(double, double)>;

// Same shapes, a trailing-dim broadcast, a two-sided broadcast, 0-d with n-d both ways, 0-d with 0-d.
const S kBinary = {{{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{4, 1, 3}, {2, 1}}, {{}, {2, 3}}, {{2, 3}, {}}, {{}, {}}};
const S kUnary = {{{2, 3}}, {{}}, {{2, 1, 4}}};

OpRow binary(std::string name, std::function<Tensor(const Tensor&, const Tensor&)> op, F2 f,
             std::vector<Domain> domains = {Domain{}}) {
  return {.name = std::move(name),
          .samples = kBinary,
          .op = [op](const In& x) { return Out{op(x[0], x[1])}; },
          .ref = [f](const Refs& x) { return Refs{map2(x[0], x[1], f)}; },
          .domains = std::move(domains)};
}

OpRow unary(std::string name, std::function<Tensor(const Tensor&)> op, F1 f, Domain domain = {}) {
  return {.name = std::move(name),
          .samples = kUnary,
          .op = [op](const In& x) { return Out{op(x[0])}; },
          .ref = [f](const Refs& x) { return Refs{map(x[0], f)}; },
          .domains = {domain}};
}

OpRow compare_row(std::string name, std::function<Tensor(const Tensor&, const Tensor&)> op,
                  std::function<bool(double, double)> f) {
  OpRow r = binary(std::move(name), std::move(op), [f](double a, double b) { return f(a, b) ? 1.0 : 0.0; },
                   {integers(-2, 2)});  // whole numbers, so that ties occur
  r.ref = [f](const Refs& x) {
    return Refs{map2(x[0], x[1], [f](double a, double b) { return f(a, b) ? 1.0 : 0.0; }, kBool)};
  };
  r.differentiable = false;
  return r;
}

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

double sigmoid_ref(double v) { return 1 / (1 + std::exp(-v)); }
// A NaN input stays NaN (comparisons with it are false); a NaN bound is the caller's affair.
double clamp_ref(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }
// torch.maximum/minimum: NaN if either is NaN.
double maximum_ref(double a, double b) { return std::isnan(a) || std::isnan(b) ? kNan : std::max(a, b); }
double minimum_ref(double a, double b) { return std::isnan(a) || std::isnan(b) ? kNan : std::min(a, b); }
// torch.remainder, a - b floor(a / b) with fmod's infinities: remainder(-0.1, -inf) is -0.1, (0.2, -inf) -inf.
double remainder_ref(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

std::vector<OpRow> pointwise_rows() {
  std::vector<OpRow> rows = {
      binary("add", [](auto& a, auto& b) { return add(a, b); }, [](double a, double b) { return a + b; }),
      binary("add_alpha", [](auto& a, auto& b) { return add(a, b, -1.5); },
             [](double a, double b) { return a - 1.5 * b; }),
      binary("sub", [](auto& a, auto& b) { return a - b; }, [](double a, double b) { return a - b; }),
      binary("sub_alpha", [](auto& a, auto& b) { return sub(a, b, 0.5); },
             [](double a, double b) { return a - 0.5 * b; }),
      binary("mul", [](auto& a, auto& b) { return a * b; }, [](double a, double b) { return a * b; }),
      binary("div", [](auto& a, auto& b) { return a / b; }, [](double a, double b) { return a / b; },
             {Domain{}, real(0.5, 2.5)}),
      binary("div_negative_denominator", [](auto& a, auto& b) { return div(a, b); },
             [](double a, double b) { return a / b; }, {Domain{}, real(-2.5, -0.5)}),
      binary("pow", [](auto& a, auto& b) { return pow(a, b); }, [](double a, double b) { return std::pow(a, b); },
             {positive(), Domain{}}),
      // Python's modulo: the divisor's sign. Random operands do not land on its jumps (a / b whole).
      binary("remainder", [](auto& a, auto& b) { return a % b; }, remainder_ref, {Domain{}, real(0.5, 2.5)}),
      binary("remainder_negative_divisor", [](auto& a, auto& b) { return remainder(a, b); }, remainder_ref,
             {Domain{}, real(-2.5, -0.5)}),
      binary("maximum", [](auto& a, auto& b) { return maximum(a, b); }, maximum_ref),
      binary("minimum", [](auto& a, auto& b) { return minimum(a, b); }, minimum_ref),

      unary("add_scalar", [](auto& x) { return x + 2.5; }, [](double v) { return v + 2.5; }),
      unary("remainder_scalar", [](auto& x) { return x.remainder(0.75); }, [](double v) { return remainder_ref(v, 0.75); }),
      unary("add_scalar_alpha", [](auto& x) { return add(x, 2.5, -2); }, [](double v) { return v - 5.0; }),
      unary("sub_scalar", [](auto& x) { return sub(x, 1.25, 2); }, [](double v) { return v - 2.5; }),
      unary("rsub_scalar", [](auto& x) { return 3.0 - x; }, [](double v) { return 3.0 - v; }),
      unary("mul_scalar", [](auto& x) { return x * -1.5; }, [](double v) { return v * -1.5; }),
      unary("mul_int_scalar", [](auto& x) { return 3 * x; }, [](double v) { return 3 * v; }),
      unary("div_scalar", [](auto& x) { return x / 4.0; }, [](double v) { return v / 4.0; }),
      unary("rdiv_scalar", [](auto& x) { return 2.0 / x; }, [](double v) { return 2.0 / v; }, positive()),
      unary("pow_int_scalar", [](auto& x) { return pow(x, 3); }, [](double v) { return v * v * v; }),
      unary("pow_2", [](auto& x) { return x.pow(2); }, [](double v) { return v * v; }),
      unary("pow_0", [](auto& x) { return x.pow(0); }, [](double v) { return 1.0; }),
      unary("pow_fractional", [](auto& x) { return pow(x, 2.5); }, [](double v) { return std::pow(v, 2.5); },
            positive()),
      unary("pow_negative", [](auto& x) { return pow(x, -1.5); }, [](double v) { return std::pow(v, -1.5); },
            positive()),
      unary("pow_scalar_base", [](auto& x) { return pow(2.0, x); }, [](double v) { return std::pow(2.0, v); }),

      unary("neg", [](auto& x) { return neg(x); }, [](double v) { return -v; }),
      unary("exp", [](auto& x) { return exp(x); }, [](double v) { return std::exp(v); }),
      unary("log", [](auto& x) { return log(x); }, [](double v) { return std::log(v); }, positive()),
      unary("sqrt", [](auto& x) { return sqrt(x); }, [](double v) { return std::sqrt(v); }, positive()),
      unary("rsqrt", [](auto& x) { return rsqrt(x); }, [](double v) { return 1 / std::sqrt(v); }, positive()),
      unary("abs", [](auto& x) { return abs(x); }, [](double v) { return std::abs(v); }),
      unary("sign", [](auto& x) { return sign(x); }, [](double v) { return double((v > 0) - (v < 0)); }),
      unary("relu", [](auto& x) { return relu(x); }, [](double v) { return std::isnan(v) || v > 0 ? v : 0.0; }),
      unary("sigmoid", [](auto& x) { return sigmoid(x); }, sigmoid_ref, real(-6, 6)),
      unary("tanh", [](auto& x) { return tanh(x); }, [](double v) { return std::tanh(v); }, real(-3, 3)),
      unary("square", [](auto& x) { return square(x); }, [](double v) { return v * v; }),
      unary("reciprocal", [](auto& x) { return reciprocal(x); }, [](double v) { return 1 / v; }, real(0.3, 3)),
      unary("reciprocal_negative", [](auto& x) { return x.reciprocal(); }, [](double v) { return 1 / v; },
            real(-3, -0.3)),
      unary("sin", [](auto& x) { return sin(x); }, [](double v) { return std::sin(v); }, real(-4, 4)),
      unary("cos", [](auto& x) { return cos(x); }, [](double v) { return std::cos(v); }, real(-4, 4)),
      unary("erf", [](auto& x) { return erf(x); }, [](double v) { return std::erf(v); }, real(-2.5, 2.5)),
      unary("log1p", [](auto& x) { return log1p(x); }, [](double v) { return std::log1p(v); }, real(-0.7, 3)),
      unary("clamp", [](auto& x) { return clamp(x, -0.5, 0.7); }, [](double v) { return clamp_ref(v, -0.5, 0.7); }),
      unary("clamp_min_only", [](auto& x) { return x.clamp(-0.3); }, [](double v) { return std::max(v, -0.3); }),
      unary("clamp_max_only", [](auto& x) { return clamp(x, std::nullopt, 0.4); },
            [](double v) { return std::min(v, 0.4); }),
      unary("clamp_min", [](auto& x) { return clamp_min(x, 0.3); }, [](double v) { return std::max(v, 0.3); }),
      unary("clamp_max", [](auto& x) { return clamp_max(x, -0.2); }, [](double v) { return std::min(v, -0.2); }),
      // A NaN bound: with both bounds, or through clamp_min/clamp_max, every element is NaN; as
      // clamp's only bound it changes nothing (PyTorch 1.13's rules, tests/fixtures/specials.json).
      unary("clamp_min_nan_with_max", [](auto& x) { return clamp(x, kNan, 0.7); }, [](double) { return kNan; }),
      unary("clamp_max_nan_with_min", [](auto& x) { return x.clamp(-0.5, kNan); }, [](double) { return kNan; }),
      unary("clamp_min_nan", [](auto& x) { return clamp_min(x, kNan); }, [](double) { return kNan; }),
      unary("clamp_max_nan", [](auto& x) { return x.clamp_max(kNan); }, [](double) { return kNan; }),
      unary("clamp_only_min_nan", [](auto& x) { return clamp(x, kNan); }, [](double v) { return v; }),
      unary("clamp_only_max_nan", [](auto& x) { return clamp(x, std::nullopt, kNan); }, [](double v) { return v; }),

      compare_row("eq", [](auto& a, auto& b) { return eq(a, b); }, [](double a, double b) { return a == b; }),
      compare_row("ne", [](auto& a, auto& b) { return a != b; }, [](double a, double b) { return a != b; }),
      compare_row("lt", [](auto& a, auto& b) { return lt(a, b); }, [](double a, double b) { return a < b; }),
      compare_row("le", [](auto& a, auto& b) { return a <= b; }, [](double a, double b) { return a <= b; }),
      compare_row("gt", [](auto& a, auto& b) { return gt(a, b); }, [](double a, double b) { return a > b; }),
      compare_row("ge", [](auto& a, auto& b) { return ge(a, b); }, [](double a, double b) { return a >= b; }),
      compare_row("eq_scalar", [](auto& a, auto&) { return eq(a, 1); }, [](double a, double) { return a == 1; }),
      compare_row("lt_scalar", [](auto& a, auto&) { return a < 0.5; }, [](double a, double) { return a < 0.5; }),
      compare_row("ge_scalar", [](auto& a, auto&) { return a.ge(-1); }, [](double a, double) { return a >= -1; }),
  };
  // The scalar comparisons ignore their second input; give them one-input samples.
  for (OpRow& r : rows)
    if (r.name.ends_with("_scalar") && !r.differentiable) {
      r.samples = kUnary;
      auto op = r.op;
      auto ref = r.ref;
      r.op = [op](const In& x) { return op({x[0], x[0]}); };
      r.ref = [ref](const Refs& x) { return ref({x[0], zeros_nd({})}); };
    }

  // Tensor bounds, broadcast with the input: NaN in any of the three gives NaN; min above max gives max.
  rows.push_back({.name = "clamp_tensor",
                  .samples = {{{3, 4}, {4}, {3, 1}}, {{2, 3}, {2, 3}, {2, 3}}, {{}, {2, 1}, {3}}},
                  .op = [](const In& x) { return Out{clamp(x[0], x[1], x[2])}; },
                  .ref = [](const Refs& x) { return Refs{map2(map2(x[0], x[1], maximum_ref), x[2], minimum_ref)}; }});
  rows.push_back({.name = "clamp_tensor_min_only",
                  .samples = {{{3, 4}, {3, 4}}, {{2, 3}, {3}}},
                  .op = [](const In& x) { return Out{x[0].clamp(x[1])}; },
                  .ref = [](const Refs& x) { return Refs{map2(x[0], x[1], maximum_ref)}; }});
  rows.push_back({.name = "clamp_tensor_max_only",
                  .samples = {{{3, 4}, {3, 4}}, {{2, 3}, {}}},
                  .op = [](const In& x) { return Out{clamp(x[0], std::nullopt, x[1])}; },
                  .ref = [](const Refs& x) { return Refs{map2(x[0], x[1], minimum_ref)}; }});
  rows.push_back({.name = "clamp_min_tensor",
                  .samples = {{{3, 4}, {4}}, {{2, 3}, {2, 3}}},
                  .op = [](const In& x) { return Out{clamp_min(x[0], x[1])}; },
                  .ref = [](const Refs& x) { return Refs{map2(x[0], x[1], maximum_ref)}; }});
  rows.push_back({.name = "clamp_max_tensor",
                  .samples = {{{3, 4}, {3, 4}}, {{2, 3}, {3}}},
                  .op = [](const In& x) { return Out{x[0].clamp_max(x[1])}; },
                  .ref = [](const Refs& x) { return Refs{map2(x[0], x[1], minimum_ref)}; }});

  const S where_samples = {{{2, 3}, {2, 3}, {2, 3}}, {{2, 1}, {3}, {2, 3}}, {{}, {2, 3}, {}}, {{2, 3}, {}, {1, 3}}};
  rows.push_back({.name = "where",
                  .samples = where_samples,
                  .op = [](const In& x) { return Out{where(x[0], x[1], x[2])}; },
                  .ref = [](const Refs& x) { return Refs{where_nd(x[0], x[1], x[2])}; },
                  .domains = {boolean(), Domain{}}});
  rows.push_back({.name = "where_scalar_other",
                  .samples = {{{2, 3}, {2, 3}}, {{3}, {2, 3}}, {{}, {}}},
                  .op = [](const In& x) { return Out{where(x[0], x[1], 1.5)}; },
                  .ref = [](const Refs& x) { return Refs{where_nd(x[0], x[1], Nd{{}, {1.5}})}; },
                  .domains = {boolean(), Domain{}}});
  rows.push_back({.name = "where_scalar_self",
                  .samples = {{{2, 3}, {2, 3}}, {{2, 3}, {3}}},
                  .op = [](const In& x) { return Out{where(x[0], -0.5, x[1])}; },
                  .ref = [](const Refs& x) { return Refs{where_nd(x[0], Nd{{}, {-0.5}}, x[1])}; },
                  .domains = {boolean(), Domain{}}});
  // ReLU's fused backward (its comparison with the where composite: vector_loops_test.cpp).
  rows.push_back({.name = "threshold_backward",
                  .samples = {{{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{4, 1, 3}, {2, 1}}, {{}, {}}},
                  .op = [](const In& x) { return Out{threshold_backward(x[0], x[1], 0)}; },
                  .ref = [](const Refs& x) {
                    return Refs{map2(x[0], x[1], [](double g, double y) { return y <= 0 ? 0.0 : g; })};
                  }});
  rows.push_back({.name = "masked_fill",
                  .samples = {{{2, 3}, {2, 3}}, {{2, 3}, {3}}, {{2, 3}, {}}, {{4, 2, 3}, {2, 1}}, {{}, {}}},
                  .op = [](const In& x) { return Out{masked_fill(x[0], x[1], -1.25)}; },
                  .ref = [](const Refs& x) { return Refs{where_nd(x[1], Nd{{}, {-1.25}}, x[0])}; },
                  .domains = {Domain{}, boolean()}});
  // Every row runs with NaN and +-inf too; the vectorised loops (relu, its backward, clamp, where)
  // get a long sample that reaches them.
  for (OpRow& r : rows) {
    // A NaN bound passes no gradient (x >= NaN is false), which finite differences do not see.
    if (r.name.find("_nan") != std::string::npos) r.differentiable = false;
    r.specials = true;
    if (r.name == "relu" || (r.name.starts_with("clamp") && r.samples[0].size() == 1))
      r.special_samples = {{{1031}}, {{5, 67}}};
    if (r.name == "threshold_backward") r.special_samples = {{{1031}, {1031}}, {{5, 67}, {}}};
    if (r.name == "where") r.special_samples = {{{1031}, {1031}, {1031}}, {{5, 67}, {}, {5, 67}}};
  }
  return rows;
}
COHORT_OP_ROWS("pointwise", pointwise_rows);

}  // namespace
}  // namespace cohort::testing
