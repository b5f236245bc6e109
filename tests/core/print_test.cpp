// repr(Tensor) against PyTorch 1.13's repr(). Each expected string was printed by
// /usr/bin/python3 -c "import torch; print(repr(<the Python expression in the comment>))".
#include <gtest/gtest.h>

#include <limits>
#include <sstream>
#include <string>

#include "cohort/autograd/node.h"
#include "cohort/core/tensor.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/shape.h"

namespace cohort {
namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Flat lists are spelled tensor(NestedValues{...}): tensor({1.0, 2.5}) is ambiguous between the
// NestedValues and ArrayRef overloads.

TEST(Print, FixedFourDecimals) {
  // torch.tensor([[1.0, 2.5], [3.0, 4.0]])
  EXPECT_EQ(repr(tensor({{1.0, 2.5}, {3.0, 4.0}})),
            "tensor([[1.0000, 2.5000],\n"
            "        [3.0000, 4.0000]])");
  // torch.tensor([-1.5, 2.25, -3.0])
  EXPECT_EQ(repr(tensor(NestedValues{-1.5, 2.25, -3.0})), "tensor([-1.5000,  2.2500, -3.0000])");
}

TEST(Print, IntegralFloats) {
  // torch.tensor([[1., 2.], [3., 4.]])
  EXPECT_EQ(repr(tensor({{1.0, 2.0}, {3.0, 4.0}})),
            "tensor([[1., 2.],\n"
            "        [3., 4.]])");
  // torch.tensor([0., 0.])
  EXPECT_EQ(repr(tensor(NestedValues{0.0, 0.0})), "tensor([0., 0.])");
  // torch.tensor([-0., 1.])
  EXPECT_EQ(repr(tensor(NestedValues{-0.0, 1.0})), "tensor([-0., 1.])");
}

TEST(Print, Scientific) {
  // torch.tensor([1e10, 1.0])            (max > 1e8)
  EXPECT_EQ(repr(tensor(NestedValues{1e10, 1.0})), "tensor([1.0000e+10, 1.0000e+00])");
  // torch.tensor([1e-5, 1.0])            (min < 1e-4)
  EXPECT_EQ(repr(tensor(NestedValues{1e-5, 1.0})), "tensor([1.0000e-05, 1.0000e+00])");
  // torch.tensor([1.23456789e-3, 12.0])  (max / min > 1000)
  EXPECT_EQ(repr(tensor(NestedValues{1.23456789e-3, 12.0})), "tensor([1.2346e-03, 1.2000e+01])");
  // torch.tensor([1e12, 1.0, 0.0])       (integral, yet scientific)
  EXPECT_EQ(repr(tensor(NestedValues{1e12, 1.0, 0.0})), "tensor([1.0000e+12, 1.0000e+00, 0.0000e+00])");
}

TEST(Print, NonFinite) {
  // torch.tensor([1.5, float('nan'), float('inf'), -float('inf')])
  EXPECT_EQ(repr(tensor(NestedValues{1.5, kNan, kInf, -kInf})), "tensor([1.5000,    nan,    inf,   -inf])");
  // torch.tensor([1., float('nan'), -float('inf')])   (the width ignores non-finite values)
  EXPECT_EQ(repr(tensor(NestedValues{1.0, kNan, -kInf})), "tensor([1., nan, -inf])");
  // torch.tensor([100., float('nan')])
  EXPECT_EQ(repr(tensor(NestedValues{100.0, kNan})), "tensor([100.,  nan])");
  // torch.tensor([[1e-5, 1e5],[float('nan'), 0.]])
  EXPECT_EQ(repr(tensor({{1e-5, 1e5}, {kNan, 0.0}})),
            "tensor([[1.0000e-05, 1.0000e+05],\n"
            "        [       nan, 0.0000e+00]])");
  // torch.tensor(float('nan'))
  EXPECT_EQ(repr(scalar_tensor(kNan)), "tensor(nan)");
}

TEST(Print, IntegersAndBools) {
  // torch.tensor([1, -20, 300])
  EXPECT_EQ(repr(tensor(NestedValues{1, -20, 300})), "tensor([  1, -20, 300])");
  // torch.tensor([2**40, -5])
  EXPECT_EQ(repr(tensor(NestedValues{int64_t{1} << 40, int64_t{-5}})), "tensor([1099511627776,            -5])");
  // torch.tensor([[True, False], [False, True]])
  EXPECT_EQ(repr(tensor({{true, false}, {false, true}})),
            "tensor([[ True, False],\n"
            "        [False,  True]])");
}

TEST(Print, DTypeSuffix) {
  // torch.tensor([1.5, 2.0], dtype=torch.float64)
  EXPECT_EQ(repr(tensor(NestedValues{1.5, 2.0}, kFloat64)), "tensor([1.5000, 2.0000], dtype=torch.float64)");
  // torch.tensor([1, 2], dtype=torch.int32)
  EXPECT_EQ(repr(tensor(NestedValues{1, 2}, kInt32)), "tensor([1, 2], dtype=torch.int32)");
  // torch.tensor([1, 2], dtype=torch.uint8)
  EXPECT_EQ(repr(tensor(NestedValues{1, 2}, kUInt8)), "tensor([1, 2], dtype=torch.uint8)");
}

TEST(Print, ZeroDim) {
  // torch.tensor(3.5)
  EXPECT_EQ(repr(scalar_tensor(3.5)), "tensor(3.5000)");
  // torch.tensor(3)
  EXPECT_EQ(repr(scalar_tensor(3, kInt64)), "tensor(3)");
  // torch.tensor(2., dtype=torch.float64)
  EXPECT_EQ(repr(scalar_tensor(2.0, kFloat64)), "tensor(2., dtype=torch.float64)");
}

TEST(Print, Empty) {
  // torch.tensor([])
  EXPECT_EQ(repr(empty({0})), "tensor([])");
  // torch.zeros(0, 3)
  EXPECT_EQ(repr(zeros({0, 3})), "tensor([], size=(0, 3))");
  // torch.zeros(0, dtype=torch.int64)   (an empty tensor names even int64)
  EXPECT_EQ(repr(zeros({0}, kInt64)), "tensor([], dtype=torch.int64)");
  // torch.zeros(2, 0, dtype=torch.bool)
  EXPECT_EQ(repr(zeros({2, 0}, kBool)), "tensor([], size=(2, 0), dtype=torch.bool)");
}

TEST(Print, WrapsLongRows) {
  // torch.arange(30.)
  EXPECT_EQ(repr(arange(30.0)),
            "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
            "        14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27.,\n"
            "        28., 29.])");
}

TEST(Print, SuffixWrapsPastLineWidth) {
  // torch.linspace(0, 1, 9, dtype=torch.float64)
  EXPECT_EQ(repr(linspace(0, 1, 9, kFloat64)),
            "tensor([0.0000, 0.1250, 0.2500, 0.3750, 0.5000, 0.6250, 0.7500, 0.8750, 1.0000],\n"
            "       dtype=torch.float64)");
  // torch.linspace(0, 1, 20, dtype=torch.float64, requires_grad=True)
  EXPECT_EQ(repr(linspace(0, 1, 20, TensorOptions(kFloat64).requires_grad(true))),
            "tensor([0.0000, 0.0526, 0.1053, 0.1579, 0.2105, 0.2632, 0.3158, 0.3684, 0.4211,\n"
            "        0.4737, 0.5263, 0.5789, 0.6316, 0.6842, 0.7368, 0.7895, 0.8421, 0.8947,\n"
            "        0.9474, 1.0000], dtype=torch.float64, requires_grad=True)");
}

TEST(Print, Summarized) {
  // torch.arange(2000)
  EXPECT_EQ(repr(arange(2000)), "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])");
  // torch.arange(1001)
  EXPECT_EQ(repr(arange(1001)), "tensor([   0,    1,    2,  ...,  998,  999, 1000])");
  // torch.arange(2000).reshape(1000, 2)
  EXPECT_EQ(repr(arange(2000).reshape({1000, 2})),
            "tensor([[   0,    1],\n"
            "        [   2,    3],\n"
            "        [   4,    5],\n"
            "        ...,\n"
            "        [1994, 1995],\n"
            "        [1996, 1997],\n"
            "        [1998, 1999]])");
  // torch.arange(2000.).reshape(40, 50)   (the width comes from the shown elements only)
  EXPECT_EQ(repr(arange(2000.0).reshape({40, 50})),
            "tensor([[0.0000e+00, 1.0000e+00, 2.0000e+00,  ..., 4.7000e+01, 4.8000e+01,\n"
            "         4.9000e+01],\n"
            "        [5.0000e+01, 5.1000e+01, 5.2000e+01,  ..., 9.7000e+01, 9.8000e+01,\n"
            "         9.9000e+01],\n"
            "        [1.0000e+02, 1.0100e+02, 1.0200e+02,  ..., 1.4700e+02, 1.4800e+02,\n"
            "         1.4900e+02],\n"
            "        ...,\n"
            "        [1.8500e+03, 1.8510e+03, 1.8520e+03,  ..., 1.8970e+03, 1.8980e+03,\n"
            "         1.8990e+03],\n"
            "        [1.9000e+03, 1.9010e+03, 1.9020e+03,  ..., 1.9470e+03, 1.9480e+03,\n"
            "         1.9490e+03],\n"
            "        [1.9500e+03, 1.9510e+03, 1.9520e+03,  ..., 1.9970e+03, 1.9980e+03,\n"
            "         1.9990e+03]])");
}

TEST(Print, ThreeDimsAndViews) {
  // torch.arange(24).reshape(2, 3, 4)
  EXPECT_EQ(repr(arange(24).reshape({2, 3, 4})),
            "tensor([[[ 0,  1,  2,  3],\n"
            "         [ 4,  5,  6,  7],\n"
            "         [ 8,  9, 10, 11]],\n"
            "\n"
            "        [[12, 13, 14, 15],\n"
            "         [16, 17, 18, 19],\n"
            "         [20, 21, 22, 23]]])");
  // torch.arange(6.).reshape(2, 3).t()
  EXPECT_EQ(repr(arange(6.0).reshape({2, 3}).t()),
            "tensor([[0., 3.],\n"
            "        [1., 4.],\n"
            "        [2., 5.]])");
  // torch.arange(12.).reshape(2,3,2)[:, ::2, :]
  EXPECT_EQ(repr(arange(12.0).reshape({2, 3, 2}).slice(1, 0, std::nullopt, 2)),
            "tensor([[[ 0.,  1.],\n"
            "         [ 4.,  5.]],\n"
            "\n"
            "        [[ 6.,  7.],\n"
            "         [10., 11.]]])");
  // torch.arange(10.).reshape(1,10).expand(3,10)
  EXPECT_EQ(repr(arange(10.0).reshape({1, 10}).expand({3, 10})),
            "tensor([[0., 1., 2., 3., 4., 5., 6., 7., 8., 9.],\n"
            "        [0., 1., 2., 3., 4., 5., 6., 7., 8., 9.],\n"
            "        [0., 1., 2., 3., 4., 5., 6., 7., 8., 9.]])");
  // torch.tensor([1.0, 0.5], dtype=torch.float64).reshape(2,1,1)
  EXPECT_EQ(repr(tensor(NestedValues{1.0, 0.5}, kFloat64).reshape({2, 1, 1})),
            "tensor([[[1.0000]],\n"
            "\n"
            "        [[0.5000]]], dtype=torch.float64)");
}

TEST(Print, Autograd) {
  // torch.ones(2, 2, requires_grad=True)
  EXPECT_EQ(repr(ones({2, 2}, requires_grad())),
            "tensor([[1., 1.],\n"
            "        [1., 1.]], requires_grad=True)");
  // torch.ones(2, requires_grad=True) * torch.full((2,), 2.)
  EXPECT_EQ(repr(ones({2}, requires_grad()) * full({2}, 2.0)), "tensor([2., 2.], grad_fn=<MulBackward0>)");
  // Python wraps the 2 of `x * 2` in a tensor (MulBackward0); libtorch's C++ tensor-scalar overload,
  // which cohort follows, is MulBackward1.
  EXPECT_EQ(repr(ones({2}, TensorOptions(kFloat64).requires_grad(true)) * 2),
            "tensor([2., 2.], dtype=torch.float64, grad_fn=<MulBackward1>)");
}

TEST(Print, DeviceSuffixForNonDefaultDevice) {
  // PyTorch names any device but the default one, e.g. tensor([0., 0.], device='cuda:1'); cohort's
  // default is cpu:0. (No second device to try this on in PyTorch here.)
  if (device_count() < 2) set_device_count(2);
  EXPECT_EQ(repr(zeros({2}, Device(kCPU, 1))), "tensor([0., 0.], device='cpu:1')");
  EXPECT_EQ(repr(zeros({2}, Device(kCPU, 0))), "tensor([0., 0.])");
}

TEST(Print, UndefinedToStringAndDescribe) {
  EXPECT_EQ(repr(Tensor()), "tensor(undefined)");
  std::ostringstream os;
  os << Tensor();
  EXPECT_EQ(os.str(), "[ Tensor (undefined) ]");
  EXPECT_EQ(zeros({2, 3}).toString(), "CPUFloatType");  // libtorch's type name
  EXPECT_EQ(scalar_tensor(1, kInt64).toString(), "CPULongType");
  EXPECT_EQ(zeros({2, 3}).describe(), "float32 [2, 3] on cpu:0");
  EXPECT_EQ(scalar_tensor(1, kInt64).describe(), "int64 [] on cpu:0");
}

TEST(Print, TheStreamsFormatIsRestored) {
  std::ostringstream os;
  os << std::hex << 255 << ' ' << tensor({{0.001, 0.002}}) << ' ' << 255 << ' ' << 0.5;
  const std::string s = os.str();
  EXPECT_EQ(s.substr(0, 3), "ff ");
  EXPECT_EQ(s.substr(s.size() - 7), " ff 0.5");
}

}  // namespace
}  // namespace cohort
