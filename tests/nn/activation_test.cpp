// The activation modules and nn::functional's activation options: printing (PyTorch 1.13's reprs),
// PReLU's parameter, option checks, in-place forms and the functional spellings of libtorch. Values
// and gradients of the ops are in tests/ops/op_table_activation_test.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <sstream>

#include <cohort/cohort.h>

#include "support/error_of.h"

using namespace cohort;
using cohort::testing::error_of;
using ::testing::HasSubstr;
namespace F = cohort::nn::functional;

namespace {

template <class M>
std::string repr(const M& m) {
  std::ostringstream os;
  os << *m;
  return os.str();
}

Tensor sample() { return tensor({-7.0, -3.5, -1.0, -0.25, 0.25, 1.0, 3.5, 7.0}, kFloat64); }

}  // namespace

// The strings are PyTorch 1.13's repr of the same modules.
TEST(NnActivation, PrintsAsPyTorch) {
  EXPECT_EQ(repr(nn::ELU()), "ELU(alpha=1.0)");
  EXPECT_EQ(repr(nn::ELU(nn::ELUOptions().inplace(true))), "ELU(alpha=1.0, inplace=True)");
  EXPECT_EQ(repr(nn::SELU()), "SELU()");
  EXPECT_EQ(repr(nn::CELU(nn::CELUOptions().alpha(2))), "CELU(alpha=2.0)");
  EXPECT_EQ(repr(nn::Hardtanh()), "Hardtanh(min_val=-1.0, max_val=1.0)");
  EXPECT_EQ(repr(nn::ReLU6()), "ReLU6()");
  EXPECT_EQ(repr(nn::ReLU6(true)), "ReLU6(inplace=True)");
  EXPECT_EQ(repr(nn::Softplus()), "Softplus(beta=1, threshold=20)");
  EXPECT_EQ(repr(nn::Softplus(nn::SoftplusOptions().beta(0.5))), "Softplus(beta=0.5, threshold=20)");
  EXPECT_EQ(repr(nn::Mish()), "Mish()");
  EXPECT_EQ(repr(nn::PReLU()), "PReLU(num_parameters=1)");
  EXPECT_EQ(repr(nn::PReLU(nn::PReLUOptions().num_parameters(3))), "PReLU(num_parameters=3)");
  EXPECT_EQ(repr(nn::LogSigmoid()), "LogSigmoid()");
  EXPECT_EQ(repr(nn::Softsign()), "Softsign()");
  EXPECT_EQ(repr(nn::Tanhshrink()), "Tanhshrink()");
  EXPECT_EQ(repr(nn::Softshrink()), "Softshrink(0.5)");
  EXPECT_EQ(repr(nn::Hardshrink(0.25)), "Hardshrink(0.25)");
  EXPECT_EQ(repr(nn::Threshold(nn::ThresholdOptions(0.1, 20.0).inplace(true))),
            "Threshold(threshold=0.1, value=20.0, inplace=True)");
  EXPECT_EQ(repr(nn::Softmax2d()), "Softmax2d()");
  EXPECT_EQ(repr(nn::Softmin(1)), "Softmin(dim=1)");
  EXPECT_EQ(repr(nn::GLU()), "GLU(dim=-1)");
  EXPECT_EQ(repr(nn::RReLU()), "RReLU(lower=0.125, upper=0.3333333333333333)");
  EXPECT_EQ(repr(nn::RReLU(nn::RReLUOptions().lower(0.1).upper(0.5).inplace(true))),
            "RReLU(lower=0.1, upper=0.5, inplace=True)");
}

TEST(NnActivation, PReLUHasOneWeightPerChannel) {
  nn::PReLU prelu(nn::PReLUOptions().num_parameters(3).init(0.1));
  EXPECT_EQ(prelu->named_parameters().keys(), std::vector<std::string>{"weight"});
  EXPECT_TRUE(prelu->weight.equal(full({3}, 0.1)));
  EXPECT_EQ(nn::PReLU()->weight.sizes(), (Shape{1}));
  EXPECT_TRUE(nn::PReLU()->weight.equal(full({1}, 0.25)));

  Tensor x = tensor({-1.0, 2.0, -3.0, 4.0, -5.0, -6.0}).view({2, 3});
  {
    NoGradGuard guard;
    prelu->weight.copy_(tensor({0.5, 1.5, 2.0}));
  }
  Tensor y = prelu(x);
  EXPECT_TRUE(y.allclose(tensor({-0.5, 2.0, -6.0, 4.0, -7.5, -12.0}).view({2, 3})));
  y.sum().backward();
  // d/dw_c: the sum of the negative inputs of channel c.
  EXPECT_TRUE(prelu->weight.grad().allclose(tensor({-1.0, -5.0, -9.0})));

  EXPECT_THAT(error_of([&] { prelu(ones({2, 4})); }), HasSubstr("prelu: weight must have 1 value or one per channel"));
  EXPECT_THAT(error_of([&] { F::prelu(ones({2, 3}), ones({1, 3})); }),
              HasSubstr("prelu: weight must be a scalar or 1-d tensor, got 2 dims"));
  EXPECT_THAT(error_of([&] { F::prelu(ones({3}), ones({3})); }), HasSubstr("got 3"));
  EXPECT_THAT(error_of([] { nn::PReLU(nn::PReLUOptions().num_parameters(0)); }),
              HasSubstr("PReLU: num_parameters must be at least 1, got 0"));
}

// Training draws a slope in [lower, upper] per negative element (the gradient is that slope);
// evaluation uses their mean.
TEST(NnActivation, RReLUDrawsSlopesInTraining) {
  manual_seed(7);
  Tensor x = cat({-rand({1000}, kFloat64) - 0.1, rand({10}, kFloat64) + 0.1}).requires_grad_();
  nn::RReLU layer(nn::RReLUOptions().lower(0.2).upper(0.4));
  Tensor y = layer(x);
  Tensor slope = (y / x).detach();
  Tensor neg = slope.narrow(0, 0, 1000);
  EXPECT_GE(neg.min().item<double>(), 0.2);
  EXPECT_LE(neg.max().item<double>(), 0.4);
  EXPECT_NEAR(neg.mean().item<double>(), 0.3, 0.01);  // 1000 uniform draws: sd of the mean ~0.002
  EXPECT_TRUE(slope.narrow(0, 1000, 10).equal(ones({10}, kFloat64)));
  y.sum().backward();
  EXPECT_TRUE(x.grad().allclose(slope));
  layer->eval();
  EXPECT_TRUE(layer(x).allclose(leaky_relu(x, 0.3)));
  EXPECT_TRUE(F::rrelu(x.detach(), F::RReLUFuncOptions().lower(0.2).upper(0.4)).allclose(leaky_relu(x, 0.3)));
  Generator gen(3), again(3);
  EXPECT_TRUE(rrelu(x.detach(), 0.1, 0.5, true, &gen).equal(rrelu(x.detach(), 0.1, 0.5, true, &again)));
  EXPECT_THAT(error_of([] { nn::RReLU(nn::RReLUOptions().lower(0.5).upper(0.1)); }),
              HasSubstr("RReLU: lower must not exceed upper, got lower=0.5 and upper=0.1"));
}

TEST(NnActivation, OptionChecks) {
  EXPECT_THAT(error_of([] { nn::Hardtanh(nn::HardtanhOptions().min_val(2).max_val(1)); }),
              HasSubstr("Hardtanh: max_val must be greater than min_val, got min_val=2 and max_val=1"));
  EXPECT_THAT(error_of([] { nn::CELU(nn::CELUOptions().alpha(0)); }), HasSubstr("CELU: alpha must not be 0"));
  EXPECT_THAT(error_of([] { celu(ones({2}), 0.0); }), HasSubstr("celu: alpha must not be 0"));
  EXPECT_THAT(error_of([] { nn::Softshrink(-1.0); }), HasSubstr("Softshrink: lambda must be at least 0, got -1"));
  EXPECT_THAT(error_of([] { softshrink(ones({2}), -1.0); }), HasSubstr("softshrink: lambd must be at least 0"));
  EXPECT_THAT(error_of([] { nn::Softmax2d()(ones({2, 3})); }),
              HasSubstr("Softmax2d: expected a 3-d [C, H, W] or 4-d [N, C, H, W] input, got 2 dims [2, 3]"));
  EXPECT_THAT(error_of([] { elu(Tensor()); }), HasSubstr("elu"));
  EXPECT_THAT(error_of([] { nn::GLU()(ones({2, 3})); }),
              HasSubstr("glu: the halved dim must have an even size, but dim -1 of input [2, 3] has size 3"));
  EXPECT_THAT(error_of([] { glu(tensor(1.0)); }), HasSubstr("glu: expected a tensor of at least 1 dim"));
}

TEST(NnActivation, ModulesCallTheirFunctions) {
  const Tensor x = sample();
  EXPECT_TRUE(nn::ELU(nn::ELUOptions().alpha(0.5))(x).equal(elu(x, 0.5)));
  EXPECT_TRUE(nn::SELU()(x).equal(selu(x)));
  EXPECT_TRUE(nn::CELU(nn::CELUOptions().alpha(2))(x).equal(celu(x, 2)));
  EXPECT_TRUE(nn::Hardtanh(nn::HardtanhOptions().min_val(-2).max_val(3))(x).equal(clamp(x, -2, 3)));
  EXPECT_TRUE(nn::ReLU6()(x).equal(clamp(x, 0, 6)));
  EXPECT_TRUE(nn::Softplus(nn::SoftplusOptions().beta(2).threshold(5))(x).equal(softplus(x, 2, 5)));
  EXPECT_TRUE(nn::Mish()(x).equal(mish(x)));
  EXPECT_TRUE(nn::LogSigmoid()(x).allclose(log(sigmoid(x))));
  EXPECT_TRUE(nn::Softsign()(x).equal(softsign(x)));
  EXPECT_TRUE(nn::Tanhshrink()(x).equal(tanhshrink(x)));
  EXPECT_TRUE(nn::Softshrink(1.0)(x).equal(softshrink(x, 1.0)));
  EXPECT_TRUE(nn::Hardshrink(1.0)(x).equal(hardshrink(x, 1.0)));
  EXPECT_TRUE(nn::Threshold(0.5, -9.0)(x).equal(threshold(x, 0.5, -9.0)));
  EXPECT_TRUE(nn::Softmin(0)(x).allclose(softmax(-x, 0)));
  EXPECT_TRUE(nn::GLU(0)(x).equal(x.narrow(0, 0, 4) * sigmoid(x.narrow(0, 4, 4))));
  Tensor maps = sample().view({2, 2, 2});
  EXPECT_TRUE(nn::Softmax2d()(maps).equal(softmax(maps, 0)));
  EXPECT_TRUE(nn::Softmax2d()(maps.unsqueeze(0)).equal(softmax(maps.unsqueeze(0), 1)));
}

// Hand-worked values at the points that tell the definitions apart.
TEST(NnActivation, Values) {
  const Tensor x = tensor({-4.0, -3.0, -1.5, 0.0, 1.5, 3.0, 4.0}, kFloat64);
  EXPECT_TRUE(hardsigmoid(x).allclose(tensor({0.0, 0.0, 0.25, 0.5, 0.75, 1.0, 1.0}, kFloat64)));
  EXPECT_TRUE(hardswish(x).allclose(tensor({0.0, 0.0, -0.375, 0.0, 1.125, 3.0, 4.0}, kFloat64)));
  EXPECT_TRUE(relu6(x * 2).allclose(tensor({0.0, 0.0, 0.0, 0.0, 3.0, 6.0, 6.0}, kFloat64)));
  EXPECT_TRUE(softshrink(x, 1.5).allclose(tensor({-2.5, -1.5, 0.0, 0.0, 0.0, 1.5, 2.5}, kFloat64)));
  EXPECT_TRUE(hardshrink(x, 1.5).allclose(tensor({-4.0, -3.0, 0.0, 0.0, 0.0, 3.0, 4.0}, kFloat64)));
  // softplus(0) = log 2, and x itself past the threshold.
  EXPECT_TRUE(softplus(x, 1, 3).allclose(
      tensor({std::log1p(std::exp(-4.0)), std::log1p(std::exp(-3.0)), std::log1p(std::exp(-1.5)), std::log(2.0),
              std::log1p(std::exp(1.5)), std::log1p(std::exp(3.0)), 4.0}, kFloat64)));
  // selu(-1) = scale alpha (e^-1 - 1), selu(1) = scale.
  EXPECT_NEAR(selu(tensor(-1.0, kFloat64)).item<double>(), 1.0507009873554805 * 1.6732632423543772 * (std::exp(-1.0) - 1),
              1e-15);
  EXPECT_NEAR(celu(tensor(-1.0, kFloat64), 2.0).item<double>(), 2 * (std::exp(-0.5) - 1), 1e-15);
}

// PyTorch's backward kernels at the bounds: hardtanh and hardsigmoid pass nothing there,
// hardswish has slope x / 3 + 1 / 2 on the closed [-3, 3]; at NaN hardtanh and threshold pass the
// gradient, hardsigmoid does not (values from PyTorch 1.13's autograd).
TEST(NnActivation, GradientsAtTheKinks) {
  auto grad_of = [](const std::function<Tensor(const Tensor&)>& f, std::vector<double> at) {
    Tensor x = tensor(at, kFloat64).requires_grad_();
    f(x).sum().backward();
    return x.grad();
  };
  const double nan = std::nan("");
  const std::vector<double> at{-3, 3, -1, 1, nan};
  EXPECT_TRUE(grad_of([](auto& x) { return hardswish(x); }, at).allclose(tensor({-0.5, 1.5, 1.0 / 6, 5.0 / 6, 1.0}, kFloat64)));
  EXPECT_TRUE(grad_of([](auto& x) { return hardsigmoid(x); }, at).equal(tensor({0.0, 0.0, 1.0 / 6, 1.0 / 6, 0.0}, kFloat64)));
  EXPECT_TRUE(grad_of([](auto& x) { return hardtanh(x); }, at).equal(tensor({0.0, 0.0, 0.0, 0.0, 1.0}, kFloat64)));
  EXPECT_TRUE(grad_of([](auto& x) { return threshold(x, 1, 5); }, at).equal(tensor({0.0, 1.0, 0.0, 0.0, 1.0}, kFloat64)));
  // An infinite input sends no NaN into the other pieces' gradients (hardswish) or into prelu's
  // weight gradient.
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_TRUE(grad_of([](auto& x) { return hardswish(x); }, {-inf, inf, 1}).allclose(tensor({0.0, 1.0, 5.0 / 6}, kFloat64)));
  Tensor w = tensor({0.25}, kFloat64).requires_grad_();
  prelu(tensor({inf, -2.0, 3.0}, kFloat64), w).sum().backward();
  EXPECT_TRUE(w.grad().equal(tensor({-2.0}, kFloat64)));
}

TEST(NnActivation, InplaceWritesIntoTheInput) {
  const Tensor x = sample();
  Tensor y = x.clone();
  Tensor r = F::elu(y, F::ELUFuncOptions().alpha(0.5).inplace(true));
  EXPECT_TRUE(y.equal(elu(x, 0.5)));
  EXPECT_TRUE(r.is_same(y));
  y = x.clone();
  F::relu6(y, true);
  EXPECT_TRUE(y.equal(relu6(x)));
  y = x.clone();
  F::hardtanh(y, F::HardtanhFuncOptions().min_val(-2).max_val(2).inplace(true));
  EXPECT_TRUE(y.equal(hardtanh(x, -2, 2)));
  y = x.clone();
  F::selu(y, true);
  EXPECT_TRUE(y.equal(selu(x)));
  y = x.clone();
  F::celu(y, F::CELUFuncOptions().alpha(2).inplace(true));
  EXPECT_TRUE(y.equal(celu(x, 2)));
  y = x.clone();
  nn::Threshold(nn::ThresholdOptions(0.5, 2).inplace(true))(y);
  EXPECT_TRUE(y.equal(threshold(x, 0.5, 2)));
  y = x.clone();
  F::leaky_relu(y, F::LeakyReLUFuncOptions().negative_slope(0.2).inplace(true));
  EXPECT_TRUE(y.equal(leaky_relu(x, 0.2)));

  // In place on a non-leaf: the gradient flows through the written tensor.
  Tensor leaf = sample().requires_grad_();
  Tensor h = leaf * 1.0;
  F::elu(h, F::ELUFuncOptions().inplace(true));
  h.sum().backward();
  Tensor expected = where(sample() > 0, ones_like(sample()), exp(sample()));
  EXPECT_TRUE(leaf.grad().allclose(expected));
}

TEST(NnActivation, FunctionalSpellings) {
  const Tensor x = sample();
  EXPECT_TRUE(F::gelu(x, F::GELUFuncOptions().approximate("tanh")).equal(gelu(x, "tanh")));
  EXPECT_TRUE(F::gelu(x).equal(gelu(x)));
  EXPECT_TRUE(F::leaky_relu(x).equal(leaky_relu(x, 0.01)));
  EXPECT_TRUE(F::softplus(x, F::SoftplusFuncOptions().beta(2).threshold(4)).equal(softplus(x, 2, 4)));
  EXPECT_TRUE(F::softshrink(x, 0.75).equal(softshrink(x, 0.75)));
  EXPECT_TRUE(F::hardshrink(x, F::HardshrinkFuncOptions().lambda(0.75)).equal(hardshrink(x, 0.75)));
  EXPECT_TRUE(F::logsigmoid(x).equal(log_sigmoid(x)));
  Tensor m = x.view({2, 4}).to(kFloat32);
  EXPECT_TRUE(F::softmax(m, F::SoftmaxFuncOptions(1).dtype(kFloat64)).equal(softmax(m.to(kFloat64), 1)));
  EXPECT_TRUE(F::log_softmax(m, F::LogSoftmaxFuncOptions(0)).equal(log_softmax(m, 0)));
}
