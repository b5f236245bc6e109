// The generic op-table tests (STYLE.md section 5): every row of the table (tests/ops/op_table_*_test.cpp)
// against its naive reference, again on non-contiguous views of the same values, through gradcheck
// and gradgradcheck (float64, contiguous and non-contiguous) when differentiable, float32
// against float64, and, for rows that opt in, with NaN and +-inf among the inputs (values only).
// Test names: OpTable/OpTableTest.<Check>/<op>, e.g. --gtest_filter='OpTable/*/softmax'.

#include "support/gradcheck.h"
#include "support/op_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <iostream>
#include <set>

#include "cohort/autograd/engine.h"
#include "cohort/autograd/record.h"
#include "cohort/core/device.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"

namespace cohort::testing {
namespace {

// Each check is instantiated over the rows it applies to (no skipped instances).
class OpTableTest : public ::testing::TestWithParam<size_t> {
 protected:
  const OpRow& row() const { return op_table()[GetParam()]; }
};
class OpTableStrided : public OpTableTest {};
class OpTableGradcheck : public OpTableTest {};
class OpTableGradgradcheck : public OpTableTest {};
class OpTableSpecials : public OpTableTest {};
class OpTableOnCpu1 : public OpTableTest {
 protected:
  void SetUp() override {
    saved_ = device_count();
    if (saved_ < 2) set_device_count(2);
  }
  void TearDown() override { set_device_count(saved_); }

 private:
  int saved_ = 1;
};

TEST_P(OpTableTest, Reference) {
  for (size_t s = 0; s < row().samples.size(); ++s) EXPECT_TRUE(check_reference(row(), s, false));
}

TEST_P(OpTableTest, Float32MatchesFloat64) {
  for (size_t s = 0; s < row().samples.size(); ++s) EXPECT_TRUE(check_float32(row(), s));
}

// view is defined on contiguous inputs only (others need reshape), so it has no strided instance.
TEST_P(OpTableStrided, NonContiguous) {
  for (size_t s = 0; s < row().samples.size(); ++s) EXPECT_TRUE(check_reference(row(), s, true));
}

TEST_P(OpTableGradcheck, Gradcheck) {
  for (size_t s = 0; s < row().samples.size(); ++s) {
    EXPECT_TRUE(check_gradients(row(), s, false));
    if (!row().contiguous_only) EXPECT_TRUE(check_gradients(row(), s, true));
  }
}

// Second derivatives: every differentiable row, unless PyTorch has no double backward for the op.
TEST_P(OpTableGradgradcheck, Gradgradcheck) {
  for (size_t s = 0; s < row().samples.size(); ++s) {
    EXPECT_TRUE(check_gradgrad(row(), s, false));
    if (!row().contiguous_only) EXPECT_TRUE(check_gradgrad(row(), s, true));
  }
}

// NaN, +inf and -inf among the inputs: the values follow PyTorch's rules (float64 and float32, and
// float64 on strided views). Gradients are not compared there: finite differences at inf are not.
TEST_P(OpTableSpecials, SpecialValues) {
  for (size_t s = 0; s < special_sample_count(row()); ++s) {
    EXPECT_TRUE(check_specials(row(), s, kFloat64, false));
    if (!row().contiguous_only) EXPECT_TRUE(check_specials(row(), s, kFloat64, true));
    EXPECT_TRUE(check_specials(row(), s, kFloat32, false));
  }
}

// Every differentiable row with its inputs on cpu:1: the outputs stay there, and each gradient
// arrives on its input's device with its input's dtype, so no backward allocates on the default
// device (as data-parallel replicas need).
TEST_P(OpTableOnCpu1, BackwardStaysOnTheInputsDevice) {
  const Device cpu1("cpu:1");
  for (size_t s = 0; s < row().samples.size(); ++s) {
    std::vector<Tensor> xs = make_inputs(row(), s, kFloat64);
    for (Tensor& x : xs) {
      x = x.to(cpu1);
      if (x.dtype() == kFloat64) x.requires_grad_(true);
    }
    std::vector<Tensor> outs = row().op(xs);
    std::vector<Tensor> roots;
    for (const Tensor& o : outs) {
      EXPECT_EQ(o.device(), cpu1) << row().name << " sample " << s;
      if (o.requires_grad()) roots.push_back((o * o).sum());  // a gradient that differs per element
    }
    if (roots.empty()) continue;
    autograd::backward(roots);
    for (size_t i = 0; i < xs.size(); ++i) {
      if (!xs[i].requires_grad() || !xs[i].grad().defined()) continue;
      EXPECT_EQ(xs[i].grad().device(), cpu1) << row().name << " sample " << s << " input " << i;
      EXPECT_EQ(xs[i].grad().dtype(), kFloat64) << row().name << " sample " << s << " input " << i;
    }
  }
}

std::vector<size_t> rows_where(const std::function<bool(const OpRow&)>& keep) {
  std::vector<size_t> r;
  for (size_t i = 0; i < op_table().size(); ++i)
    if (keep(op_table()[i])) r.push_back(i);
  return r;
}

std::string row_name(const ::testing::TestParamInfo<size_t>& info) { return op_table()[info.param].name; }

INSTANTIATE_TEST_SUITE_P(OpTable, OpTableTest, ::testing::ValuesIn(rows_where([](const OpRow&) { return true; })), row_name);
INSTANTIATE_TEST_SUITE_P(OpTable, OpTableStrided,
                         ::testing::ValuesIn(rows_where([](const OpRow& r) { return !r.contiguous_only; })), row_name);
INSTANTIATE_TEST_SUITE_P(OpTable, OpTableGradcheck,
                         ::testing::ValuesIn(rows_where([](const OpRow& r) { return r.differentiable; })), row_name);
INSTANTIATE_TEST_SUITE_P(OpTable, OpTableGradgradcheck, ::testing::ValuesIn(rows_where([](const OpRow& r) {
                           return r.differentiable && r.no_gradgrad.empty();
                         })), row_name);
INSTANTIATE_TEST_SUITE_P(OpTable, OpTableSpecials,
                         ::testing::ValuesIn(rows_where([](const OpRow& r) { return r.specials; })), row_name);
INSTANTIATE_TEST_SUITE_P(OpTable, OpTableOnCpu1,
                         ::testing::ValuesIn(rows_where([](const OpRow& r) { return r.differentiable; })), row_name);

TEST(OpTableMeta, RowNamesAreUniqueAndEveryRowIsComplete) {
  std::set<std::string> names;
  for (const OpRow& r : op_table()) {
    EXPECT_TRUE(names.insert(r.name).second) << "duplicate row " << r.name;
    EXPECT_FALSE(r.samples.empty()) << r.name << " has no samples";
    EXPECT_TRUE(r.op && r.ref) << r.name << " lacks its op or reference";
  }
  EXPECT_GE(op_table().size(), 100u);
}

// gradcheck itself: it must pass a correct backward and name the element of a wrong one.
TEST(OpTableGradcheck, FlagsAWrongBackward) {
  auto wrong_square = [](const In& x) {
    Tensor out = x[0].detach() * x[0].detach();
    return Out{autograd::record("WrongSquareBackward", out, {x[0]}, [x0 = x[0].detach()](const Tensor& g) {
      return std::vector<Tensor>{g * x0 * 3.0};  // should be 2 x
    })};
  };
  Tensor x = tensor({{1.0, 2.0}, {3.0, 4.0}}, TensorOptions(kFloat64));
  ::testing::AssertionResult r = gradcheck(wrong_square, {x}, 1e-6, 1e-5, 1e-3, "wrong_square");
  ASSERT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("wrong_square"), std::string::npos) << r.message();
  EXPECT_NE(std::string(r.message()).find("d(output 0)[0, 0] / d(input 0)[0, 0]: expected (finite difference) 2"),
            std::string::npos) << r.message();
  EXPECT_TRUE(gradcheck([](const In& x) { return Out{x[0] * x[0]}; }, {x}));
  EXPECT_TRUE(gradcheck_noncontiguous([](const In& x) { return Out{x[0] * x[0]}; }, {x}));
  Tensor nc = make_noncontiguous(x);
  EXPECT_FALSE(nc.is_contiguous());
  EXPECT_EQ(to_nd(nc).v, to_nd(x).v);
}

// The special-values inputs hold NaN, +inf, -inf and ordinary values, only in floating inputs.
TEST(OpTableSpecials, InputsHoldNanAndBothInfinities) {
  const OpRow row{.name = "specials_meta", .samples = {{{64}, {64}}}, .op = {}, .ref = {},
                  .domains = {Domain{}, boolean()}};
  std::vector<Tensor> xs = special_inputs(row, 0, kFloat64);
  ASSERT_EQ(xs.size(), 2u);
  int nan = 0, pos = 0, neg = 0, finite = 0;
  for (double v : to_nd(xs[0]).v) nan += std::isnan(v), pos += v == INFINITY, neg += v == -INFINITY, finite += std::isfinite(v);
  EXPECT_GT(nan, 0);
  EXPECT_GT(pos, 0);
  EXPECT_GT(neg, 0);
  EXPECT_GT(finite, 16);
  EXPECT_EQ(xs[1].dtype(), kBool);
  EXPECT_EQ(to_nd(special_inputs(row, 0, kFloat32)[0]).v.size(), 64u);
}

// The check catches a kernel that drops NaN (relu as x > 0 ? x : 0) and names the element.
TEST(OpTableSpecials, FlagsAnOpThatDropsNan) {
  const OpRow row{.name = "relu_dropping_nan", .samples = {{{3, 4}}},
                  .op = [](const In& x) { return Out{where(x[0] > 0, x[0], zeros_like(x[0]))}; },
                  .ref = [](const Refs& x) {
                    return Refs{map(x[0], [](double v) { return std::isnan(v) || v > 0 ? v : 0.0; })};
                  }};
  ::testing::AssertionResult r = check_specials(row, 0, kFloat64, false);
  ASSERT_FALSE(r);
  EXPECT_NE(std::string(r.message()).find("expected nan, got 0"), std::string::npos) << r.message();
  EXPECT_NE(std::string(r.message()).find("[special values]"), std::string::npos) << r.message();
}

// Prints the row count once all tests have run, for the report ("N ops").
class OpTableSummary : public ::testing::Environment {
 public:
  void TearDown() override {
    size_t samples = 0, diff = 0, gradgrad = 0, specials = 0;
    for (const OpRow& r : op_table())
      samples += r.samples.size(), diff += r.differentiable, gradgrad += r.differentiable && r.no_gradgrad.empty(),
          specials += r.specials;
    std::cout << "[ op table ] " << op_table().size() << " ops (" << diff << " differentiable, " << gradgrad
              << " gradgradchecked, " << specials << " with special values, " << samples << " samples):";
    for (auto& [area, n] : op_table_areas()) std::cout << " " << area << " " << n;
    std::cout << "\n";
  }
};
[[maybe_unused]] ::testing::Environment* const kSummary = ::testing::AddGlobalTestEnvironment(new OpTableSummary);

}  // namespace
}  // namespace cohort::testing
