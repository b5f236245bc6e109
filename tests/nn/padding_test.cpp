// F::pad and the padding layers: every mode through libtorch's options against cohort::pad (whose
// values and gradients the op table and PyTorch's fixtures check), the layers' constructors and
// PyTorch's reprs, and the errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "cohort/nn/functional/padding.h"
#include "cohort/nn/padding.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/padding.h"
#include "support/error_of.h"
#include "support/pytorch_fixture.h"

namespace cohort::testing {
namespace {

namespace F = nn::functional;
using ::testing::HasSubstr;

std::string printed(const nn::Module& m) {
  std::ostringstream os;
  m.pretty_print(os);
  return os.str();
}

TEST(Padding, FunctionalPadRunsEachMode) {
  Tensor x = arange(24, kFloat64).reshape({1, 2, 3, 4});
  EXPECT_TRUE(F::pad(x, F::PadFuncOptions({1, 2})).equal(constant_pad_nd(x, {1, 2})));
  EXPECT_TRUE(F::pad(x, F::PadFuncOptions({1, 2, 0, 1}).value(-1)).equal(constant_pad_nd(x, {1, 2, 0, 1}, -1)));
  EXPECT_TRUE(F::pad(x, F::PadFuncOptions({1, 2, 2, 1}).mode(kReflect)).equal(reflection_pad2d(x, {1, 2, 2, 1})));
  const Tensor rows = x.view({2, 3, 4});
  EXPECT_TRUE(F::pad(rows, F::PadFuncOptions({3, 0}).mode(kReplicate)).equal(replication_pad1d(rows, {3, 0})));
  // Circular: the last column comes before the first, the first two after the last.
  Tensor row = arange(4, kFloat64).view({1, 1, 4});
  EXPECT_TRUE(F::pad(row, F::PadFuncOptions({1, 2}).mode(kCircular)).equal(tensor({3.0, 0.0, 1.0, 2.0, 3.0, 0.0, 1.0}).view({1, 1, 7})));
  Tensor cube = arange(2 * 2 * 3 * 2, kFloat64).reshape({1, 2, 3, 2, 2});
  EXPECT_TRUE(F::pad(cube, F::PadFuncOptions({1, 1, 1, 0, 2, 0}).mode(kReflect)).equal(reflection_pad3d(cube, {1, 1, 1, 0, 2, 0})));
  EXPECT_EQ(F::pad(cube, F::PadFuncOptions({1, 1, 1, 1, 1, 1}).mode(kCircular)).sizes(), (Shape{1, 2, 5, 4, 4}));
}

TEST(Padding, LayersPadAsTheirModeAndPrintAsPyTorch) {
  Tensor x = arange(2 * 3 * 4, kFloat64).reshape({1, 2, 3, 4});
  nn::ReflectionPad2d reflect(nn::ReflectionPad2dOptions({1, 1, 2, 2}));
  EXPECT_TRUE(reflect(x).equal(reflection_pad2d(x, {1, 1, 2, 2})));
  EXPECT_EQ(printed(*reflect), "ReflectionPad2d((1, 1, 2, 2))");
  nn::ReflectionPad1d reflect1(3);
  EXPECT_EQ(printed(*reflect1), "ReflectionPad1d((3, 3))");
  nn::ReplicationPad3d replicate(1);
  EXPECT_EQ(replicate(x.view({1, 1, 2, 3, 4})).sizes(), (Shape{1, 1, 4, 5, 6}));
  EXPECT_EQ(printed(*replicate), "ReplicationPad3d((1, 1, 1, 1, 1, 1))");
  nn::ConstantPad2d border(nn::ConstantPad2dOptions(1, 0.5));
  EXPECT_TRUE(border(x).equal(constant_pad_nd(x, {1, 1, 1, 1}, 0.5)));
  EXPECT_EQ(printed(*border), "ConstantPad2d(padding=(1, 1, 1, 1), value=0.5)");
  nn::ConstantPad1d one_side(nn::ConstantPad1dOptions({2, 0}, -3.0));
  EXPECT_TRUE(one_side(x).equal(constant_pad_nd(x, {2, 0}, -3.0)));
  nn::ZeroPad2d zero(nn::ZeroPad2dOptions({1, 1, 2, 2}));
  EXPECT_TRUE(zero(x).equal(constant_pad_nd(x, {1, 1, 2, 2})));
  EXPECT_EQ(printed(*zero), "ZeroPad2d((1, 1, 2, 2))");
  EXPECT_EQ(zero->name(), "ZeroPad2d");
  // A copy keeps the options.
  auto copy = std::dynamic_pointer_cast<nn::ConstantPad2dImpl>(border->clone());
  ASSERT_TRUE(copy);
  EXPECT_EQ(copy->options.value(), 0.5);
}

TEST(Padding, GradientsFlowThroughTheLayers) {
  Tensor x = arange(12, kFloat64).reshape({1, 1, 3, 4}).requires_grad_(true);
  nn::ReflectionPad2d reflect(1);
  reflect(x).sum().backward();
  // Every output element sends 1 back, so the gradient sums to the output's 5 x 6 elements. Row 1 of
  // 3 is read at padded rows -1, 1 and 3, column 1 of 4 at -1 and 1: element (1, 1) is read 6 times.
  EXPECT_EQ(x.grad().sum().item<double>(), 5.0 * 6.0);
  EXPECT_EQ(x.grad()[0][0][1][1].item<double>(), 6.0);
}

TEST(Padding, ErrorsNameTheModeAndTheProblem) {
  Tensor x = zeros({1, 2, 3});
  EXPECT_THAT(error_of([&] { F::pad(x, F::PadFuncOptions({1, 1}).mode(kReflect).value(1)); }),
              HasSubstr("pad: a padding value goes with mode \"constant\" only, got value 1 with mode \"reflect\""));
  EXPECT_THAT(error_of([&] { F::pad(x, F::PadFuncOptions({3, 0}).mode(kReflect)); }),
              HasSubstr("reflection_pad1d: padding size should be less than the corresponding input dimension"));
  EXPECT_THAT(error_of([&] { F::pad(x, F::PadFuncOptions({4, 0}).mode(kCircular)); }),
              HasSubstr("pad (circular): circular padding must be at most the size of its dimension, got padding "
                        "(4, 0) at dimension 2 of input [1, 2, 3]"));
  EXPECT_THAT(error_of([&] { F::pad(x, F::PadFuncOptions({1, 1, 1, 1, 1, 1, 1, 1}).mode(kReplicate)); }),
              HasSubstr("pad: mode \"replicate\" pads 1 to 3 dims, expected 2, 4 or 6 values, got [1, 1, 1, 1, 1, 1, 1, 1]"));
  EXPECT_THAT(error_of([&] { pad(x, {1, 1}, "wrap"); }),
              HasSubstr("pad: mode must be \"constant\", \"reflect\", \"replicate\" or \"circular\", got \"wrap\""));
  EXPECT_THAT(error_of([&] { nn::ReflectionPad3d(1)(x); }),
              HasSubstr("reflection_pad3d: expected a 4-d or 5-d input, got shape [1, 2, 3]"));
}

}  // namespace
}  // namespace cohort::testing
