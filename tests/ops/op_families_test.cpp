// The op-family tables (Note [Op tables] in src/ops/cpu/kernels.h) seen from outside: what each row
// promises — libtorch's backward node name, the result dtype, no gradient for bool results, and a
// backward that saves only what its formula reads. The compile-time checks (one row per op, a
// kernel case per op) need no test; the formulas themselves are checked by the op table's gradcheck.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/error_of.h"

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <cohort/cohort.h>

using namespace cohort;
using cohort::testing::error_of;
using ::testing::HasSubstr;

namespace {

Tensor grad_input() { return tensor({{0.5, -1.5, 2.0}, {1.25, -0.75, 3.0}}, TensorOptions(kFloat64)).requires_grad_(); }

TEST(OpFamilies, EveryDifferentiableOpRecordsLibtorchsNodeName) {
  Tensor x = grad_input(), y = grad_input();
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<std::pair<Tensor, std::string>> cases = {
      // unary
      {neg(x), "NegBackward0"}, {exp(x), "ExpBackward0"}, {log(x), "LogBackward0"}, {sqrt(x), "SqrtBackward0"},
      {rsqrt(x), "RsqrtBackward0"}, {abs(x), "AbsBackward0"}, {sign(x), "SignBackward0"}, {relu(x), "ReluBackward0"},
      {sigmoid(x), "SigmoidBackward0"}, {tanh(x), "TanhBackward0"}, {square(x), "PowBackward0"},
      {reciprocal(x), "ReciprocalBackward0"}, {sin(x), "SinBackward0"}, {cos(x), "CosBackward0"},
      {erf(x), "ErfBackward0"}, {log1p(x), "Log1pBackward0"}, {clamp(x, 0, 1), "ClampBackward1"},
      // binary: tensor with tensor, and with a number (pow numbers its overloads the other way round)
      {add(x, y), "AddBackward0"}, {x + 1, "AddBackward1"}, {sub(x, y, 2), "SubBackward0"}, {x - 1, "SubBackward1"},
      {1 - x, "AddBackward1"}, {mul(x, y), "MulBackward0"}, {x * 2, "MulBackward1"}, {div(x, y), "DivBackward0"},
      {x / 2, "DivBackward1"}, {pow(x, y), "PowBackward1"}, {pow(x, 2), "PowBackward0"}, {pow(2, x), "PowBackward1"},
      {maximum(x, y), "MaximumBackward0"}, {minimum(x, y), "MinimumBackward0"},
      // reductions: the all-elements overload and the dim-list one
      {sum(x), "SumBackward0"}, {sum(x, {1}), "SumBackward1"}, {sum(x, {}, true), "SumBackward1"},
      {mean(x), "MeanBackward0"}, {mean(x, {0}, true), "MeanBackward1"}, {prod(x), "ProdBackward0"},
      {max(x), "MaxBackward1"}, {min(x), "MinBackward1"}, {amax(x), "AmaxBackward0"}, {amin(x, {1}), "AminBackward0"},
      {std::get<0>(max(x, 1)), "MaxBackward0"}, {norm(x), "NormBackward1"}, {norm(x, inf, {0}), "NormBackward1"},
      {var(x), "VarBackward0"}, {cohort::std(x), "StdBackward0"},
  };
  for (const auto& [out, node] : cases) {
    ASSERT_TRUE(out.grad_fn()) << node << " recorded no node";
    EXPECT_EQ(out.grad_fn()->name(), node);
  }
}

TEST(OpFamilies, ComparisonsAndLogicGiveBoolsWithoutGradient) {
  Tensor x = grad_input(), y = grad_input();
  const std::vector<std::pair<Tensor, std::string>> cases = {
      {eq(x, y), "eq"}, {ne(x, y), "ne"}, {lt(x, y), "lt"}, {le(x, y), "le"}, {gt(x, y), "gt"}, {ge(x, y), "ge"},
      {eq(x, 1), "eq scalar"}, {x < 0.5, "lt scalar"}, {logical_and(x, y), "logical_and"},
      {logical_or(x, y), "logical_or"}, {logical_not(x), "logical_not"}, {isnan(x), "isnan"},
      {isfinite(x), "isfinite"}, {!x, "operator!"},
  };
  for (const auto& [out, op] : cases) {
    EXPECT_EQ(out.dtype(), kBool) << op;
    EXPECT_FALSE(out.requires_grad()) << op;
    EXPECT_FALSE(out.grad_fn()) << op;
  }
}

TEST(OpFamilies, ResultDtypesFollowTheRows) {
  Tensor i = tensor({{1, -2}, {3, 4}}, TensorOptions(kInt32));
  // Float-valued unary ops and true division promote integers; the others keep them.
  for (Tensor t : {exp(i), log(i), sqrt(i), rsqrt(i), sigmoid(i), tanh(i), reciprocal(i), sin(i), cos(i), erf(i),
                   log1p(i), div(i, i), i / 2})
    EXPECT_EQ(t.dtype(), get_default_dtype());
  for (Tensor t : {neg(i), abs(i), sign(i), relu(i), square(i), add(i, i), i * 3, pow(i, 2), maximum(i, i)})
    EXPECT_EQ(t.dtype(), kInt32);
  // Sums and products of integers are int64; max and min keep the dtype.
  EXPECT_EQ(sum(i).dtype(), kInt64);
  EXPECT_EQ(prod(i).dtype(), kInt64);
  EXPECT_EQ(amax(i, {0}).dtype(), kInt32);
  EXPECT_THAT(error_of([&] { i.exp_(); }), HasSubstr("exp_: result type float32 can't be cast"));
  EXPECT_THAT(error_of([&] { mean(i); }), HasSubstr("mean: could not infer the output dtype"));
  EXPECT_THAT(error_of([&] { amax(i.narrow(0, 0, 0), {0}); }), HasSubstr("amax: cannot reduce over dim 0 of size 0"));
  EXPECT_THAT(error_of([&] { max(i.narrow(0, 0, 0)); }), HasSubstr("max: cannot reduce"));
}

// A backward keeps only the tensors its formula reads (the input, the output, or for a binary op
// those its needed gradients read); changing any other one in place leaves it working.
TEST(OpFamilies, BackwardSavesOnlyWhatItsFormulaReads) {
  auto backward_after = [](auto op, auto change) {
    Tensor leaf = grad_input();
    Tensor x = leaf * 1;
    Tensor out = op(x);
    change(x, out);
    return error_of([&] { out.sum().backward(); });
  };
  const std::string ok = "<no error>", stale = "modified by an in-place operation";
  auto change_input = [](const Tensor& x, const Tensor&) { x.add_(1); };
  auto change_output = [](const Tensor&, const Tensor& out) { out.add_(1); };
  auto exp_op = [](const Tensor& x) { return exp(x); };
  auto log_op = [](const Tensor& x) { return log(x); };
  EXPECT_EQ(backward_after(exp_op, change_input), ok);  // exp saves its output
  EXPECT_THAT(backward_after(exp_op, change_output), HasSubstr(stale));
  EXPECT_THAT(backward_after(log_op, change_input), HasSubstr(stale));  // log saves its input
  EXPECT_EQ(backward_after(log_op, change_output), ok);
  // x * c with a constant c: d/dx reads c only, so x is not kept.
  Tensor c = tensor({2.0, 3.0, 4.0}, TensorOptions(kFloat64));
  EXPECT_EQ(backward_after([&](const Tensor& x) { return x * c; }, change_input), ok);
  EXPECT_THAT(backward_after([&](const Tensor& x) { return c * x; }, [&](const Tensor&, const Tensor&) { c.add_(1); }),
              HasSubstr(stale));
  // sum saves nothing; max saves its input and output.
  EXPECT_EQ(backward_after([](const Tensor& x) { return sum(x, {1}); }, change_input), ok);
  EXPECT_THAT(backward_after([](const Tensor& x) { return amax(x, {1}); }, change_input), HasSubstr(stale));
}

}  // namespace
