// The generic op-table tests (STYLE.md section 5): every row of the table (tests/ops/op_table_*_test.cpp)
// against its naive reference, again on non-contiguous views of the same values, through gradcheck
// and gradgradcheck (float64, contiguous and non-contiguous) when differentiable, and float32
// against float64.
// Test names: OpTable/OpTableTest.<Check>/<op>, e.g. --gtest_filter='OpTable/*/softmax'.

#include "support/gradcheck.h"
#include "support/op_table.h"

#include <gtest/gtest.h>

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

// Prints the row count once all tests have run, for the report ("N ops").
class OpTableSummary : public ::testing::Environment {
 public:
  void TearDown() override {
    size_t samples = 0, diff = 0, gradgrad = 0;
    for (const OpRow& r : op_table())
      samples += r.samples.size(), diff += r.differentiable, gradgrad += r.differentiable && r.no_gradgrad.empty();
    std::cout << "[ op table ] " << op_table().size() << " ops (" << diff << " differentiable, " << gradgrad
              << " gradgradchecked, " << samples << " samples):";
    for (auto& [area, n] : op_table_areas()) std::cout << " " << area << " " << n;
    std::cout << "\n";
  }
};
[[maybe_unused]] ::testing::Environment* const kSummary = ::testing::AddGlobalTestEnvironment(new OpTableSummary);

}  // namespace
}  // namespace cohort::testing
