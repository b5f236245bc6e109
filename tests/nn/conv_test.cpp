// Convolution through nn: F::conv1d/conv2d's options against PyTorch's values (tests/fixtures/conv.json
// from tests/fixtures/generate_conv.py), the modules' reprs and errors. The op's kernels are tested in
// tests/ops/convolution_test.cpp, its values and gradients in the op table.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/pytorch_fixture.h"

#include "support/error_of.h"

using cohort::testing::error_of;

#include <nlohmann/json.hpp>
#include <sstream>

#include "cohort/autograd/engine.h"
#include "cohort/nn/conv.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"

namespace cohort {
namespace {

namespace F = nn::functional;
using ::testing::HasSubstr;
using json = nlohmann::json;

// ---- PyTorch's values ------------------------------------------------------------------------

template <size_t D>
F::ConvFuncOptions<D> options_of(const json& c) {
  auto arr = [](const json& j) {  // [v] stands for v in every dim, as PyTorch's int arguments
    auto v = j.get<std::vector<int64_t>>();
    return v.size() == 1 ? ExpandingArray<D>(v[0]) : ExpandingArray<D>(v);
  };
  F::ConvFuncOptions<D> o;
  o.stride(arr(c.at("stride"))).dilation(arr(c.at("dilation"))).groups(c.at("groups").get<int64_t>());
  const json& pad = c.at("padding");
  if (pad.is_string()) {
    if (pad == "same") {
      o.padding(kSame);
    } else {
      o.padding(kValid);
    }
  } else {
    o.padding(arr(pad));
  }
  return o;
}

TEST(ConvFixture, MatchesPyTorchValuesAndGradients) {
  const json& fixture = testing::load_fixture("conv.json");
  int checked = 0;
  for (const json& c : fixture.at("cases")) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    Tensor x = testing::decode_tensor(c.at("input")).requires_grad_(), w = testing::decode_tensor(c.at("weight")).requires_grad_();
    Tensor b = c.at("bias").is_null() ? Tensor() : testing::decode_tensor(c.at("bias")).requires_grad_();
    Tensor y = c.at("op") == "conv1d" ? F::conv1d(x, w, b, options_of<1>(c)) : F::conv2d(x, w, b, options_of<2>(c));
    EXPECT_TRUE(testing::matches_pytorch(name + " output", y, c.at("output")));
    std::vector<Tensor> wrt{x, w};
    if (b.defined()) wrt.push_back(b);
    auto grads = autograd::grad({(y * testing::decode_tensor(c.at("upstream"))).sum()}, wrt);
    EXPECT_TRUE(testing::matches_pytorch(name + " grad input", grads[0], c.at("grad_input")));
    EXPECT_TRUE(testing::matches_pytorch(name + " grad weight", grads[1], c.at("grad_weight")));
    if (b.defined()) {
      EXPECT_TRUE(testing::matches_pytorch(name + " grad bias", grads[2], c.at("grad_bias")));
    }
    // The float32 (oneDNN) path on the same numbers.
    Tensor x32 = x.detach().to(kFloat32), w32 = w.detach().to(kFloat32);
    Tensor b32 = b.defined() ? b.detach().to(kFloat32) : Tensor();
    Tensor y32 = c.at("op") == "conv1d" ? F::conv1d(x32, w32, b32, options_of<1>(c))
                                        : F::conv2d(x32, w32, b32, options_of<2>(c));
    EXPECT_LT(testing::max_abs_diff(y32, testing::decode_tensor(c.at("output"))), 1e-4) << name << " float32";
    ++checked;
  }
  EXPECT_EQ(checked, 9);
}

// ---- modules ---------------------------------------------------------------------------------

std::string repr(const nn::Module& m) {
  std::ostringstream os;
  m.pretty_print(os);
  return os.str();
}

TEST(ConvModule, ReprLikePyTorch) {
  // Each expected string printed by torch 1.13's nn.Conv1d / nn.Conv2d with the same arguments.
  EXPECT_EQ(repr(*nn::Conv2d(1, 6, 5)), "Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))");
  EXPECT_EQ(repr(*nn::Conv2d(nn::Conv2dOptions(64, 64, 3).padding(1).groups(16).bias(false))),
            "Conv2d(64, 64, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), groups=16, bias=False)");
  EXPECT_EQ(repr(*nn::Conv2d(nn::Conv2dOptions(4, 4, {2, 3}).padding(kSame).dilation(2))),
            "Conv2d(4, 4, kernel_size=(2, 3), stride=(1, 1), padding=same, dilation=(2, 2))");
  EXPECT_EQ(repr(*nn::Conv1d(nn::Conv1dOptions(4, 4, 3).padding(kValid).stride(2))),
            "Conv1d(4, 4, kernel_size=(3,), stride=(2,), padding=valid)");
  EXPECT_EQ(repr(*nn::Conv2d(nn::Conv2dOptions(4, 4, 3).padding({0, 0}).dilation({1, 1}))),
            "Conv2d(4, 4, kernel_size=(3, 3), stride=(1, 1))");
  EXPECT_EQ(repr(*nn::Conv1d(nn::Conv1dOptions(4, 8, 3).padding(1).dilation(2).groups(2).bias(false))),
            "Conv1d(4, 8, kernel_size=(3,), stride=(1,), padding=(1,), dilation=(2,), groups=2, bias=False)");
}

TEST(ConvModule, ParametersInitAndForward) {
  manual_seed(8);
  nn::Conv2d conv(nn::Conv2dOptions(4, 6, {3, 2}).stride(2).padding(1).groups(2));
  EXPECT_EQ(conv->weight.sizes(), IntArrayRef({6, 2, 3, 2}));
  EXPECT_EQ(conv->bias.sizes(), IntArrayRef({6}));
  EXPECT_EQ(conv->named_parameters().keys(), (std::vector<std::string>{"weight", "bias"}));
  const double bound = 1 / std::sqrt(12.0);  // fan_in = 2 * 3 * 2
  EXPECT_LE(conv->weight.abs().max().item<float>(), bound);
  EXPECT_LE(conv->bias.abs().max().item<float>(), bound);
  EXPECT_GT(conv->weight.abs().max().item<float>(), bound * 0.7);
  Tensor y = conv(randn({3, 4, 7, 6}));
  EXPECT_EQ(y.sizes(), IntArrayRef({3, 6, 4, 4}));
  y.sum().backward();
  EXPECT_EQ(conv->weight.grad().sizes(), conv->weight.sizes());
  EXPECT_EQ(conv->bias.grad().sizes(), conv->bias.sizes());
  auto copy = std::dynamic_pointer_cast<nn::Conv2dImpl>(conv->clone());
  ASSERT_TRUE(copy);
  EXPECT_TRUE(copy->weight.equal(conv->weight));
  EXPECT_FALSE(copy->weight.is_same(conv->weight));

  nn::Conv1d c1(nn::Conv1dOptions(3, 5, 4).padding(kSame).bias(false));
  EXPECT_FALSE(c1->bias.defined());
  EXPECT_EQ(c1->named_parameters().keys(), std::vector<std::string>{"weight"});
  EXPECT_EQ(c1(randn({2, 3, 11})).sizes(), IntArrayRef({2, 5, 11}));
  EXPECT_EQ(c1(randn({3, 11})).sizes(), IntArrayRef({5, 11}));
}

// ---- errors ----------------------------------------------------------------------------------

TEST(ConvErrors, NameTheOpAndTheShapes) {
  Tensor x = randn({2, 4, 5, 5}), w = randn({6, 2, 3, 3});
  auto g2 = F::Conv2dFuncOptions().groups(2);
  EXPECT_THAT(error_of([&] { F::conv2d(randn({2, 4, 5, 5, 1}), w, g2); }),
              HasSubstr("conv2d: expected a 3-d (unbatched) or 4-d (batched) input [N, C, H, W], got input of shape [2, 4, 5, 5, 1]"));
  EXPECT_THAT(error_of([&] { F::conv1d(x, randn({6, 4, 3})); }),
              HasSubstr("conv1d: expected a 2-d (unbatched) or 3-d (batched) input [N, C, L], got input of shape [2, 4, 5, 5]"));
  EXPECT_THAT(error_of([&] { F::conv2d(x, randn({6, 4, 3})); }),
              HasSubstr("conv2d: expected a 4-d weight [out_channels, in_channels / groups, kH, kW], got weight of shape [6, 4, 3]"));
  EXPECT_THAT(error_of([&] { F::conv2d(x, w); }),
              HasSubstr("conv2d: expected input of shape [2, 4, 5, 5] to have 2 channels (weight [6, 2, 3, 3] takes 2 per "
                        "group, times groups=1), got 4 channels"));
  EXPECT_THAT(error_of([&] { F::conv2d(x, randn({5, 2, 3, 3}), g2); }),
              HasSubstr("conv2d: out_channels (weight.size(0) = 5) must be divisible by groups=2, got weight of shape "
                        "[5, 2, 3, 3]"));
  EXPECT_THAT(error_of([&] { F::conv2d(randn({2, 4, 2, 5}), w, g2); }),
              HasSubstr("conv2d: kernel of weight [6, 2, 3, 3] (spanning 3 with dilation=(1, 1)) is larger than the padded "
                        "input (2 = 2 + 0 padding in spatial dim 0 of input [2, 4, 2, 5])"));
  EXPECT_THAT(error_of([&] { F::conv2d(x, w, F::Conv2dFuncOptions().groups(2).stride({1, 0})); }),
              HasSubstr("conv2d: stride must be positive, got stride=(1, 0)"));
  EXPECT_THAT(error_of([&] { F::conv2d(x, w, F::Conv2dFuncOptions().groups(2).stride(-1)); }),
              HasSubstr("conv2d: stride must be positive, got stride=(-1, -1)"));
  EXPECT_THAT(error_of([&] { F::conv2d(x, w, F::Conv2dFuncOptions().groups(2).stride(2).padding(kSame)); }),
              HasSubstr("conv2d: padding=same needs stride 1, got stride=(2, 2)"));
  EXPECT_THAT(error_of([&] { F::conv2d(x, w.to(kFloat64), g2); }),
              HasSubstr("conv2d: expected input and weight to have the same dtype, got float32 and float64"));
  EXPECT_THROW(F::conv2d(x, w.to(kFloat64), g2), TypeError);
  EXPECT_THAT(error_of([&] { F::conv2d(x, w, randn({6}, kFloat64), g2); }),
              HasSubstr("conv2d: expected bias to have the dtype of input and weight, got float64 and float32"));
  EXPECT_THAT(error_of([&] { F::conv2d(x, w, randn({5}), g2); }),
              HasSubstr("conv2d: expected a 1-d bias of 6 elements (weight [6, 2, 3, 3]), got bias of shape [5]"));
  EXPECT_THAT(error_of([&] { F::conv2d(x, w, F::Conv2dFuncOptions().groups(0)); }),
              HasSubstr("conv2d: groups must be positive, got groups=0"));
  EXPECT_THAT(error_of([&] { F::conv2d(x, w, g2.dilation(0)); }),
              HasSubstr("conv2d: dilation must be positive, got dilation=(0, 0)"));
  EXPECT_THAT(error_of([&] { F::conv2d(x, w, F::Conv2dFuncOptions().groups(2).padding({-1, 0})); }),
              HasSubstr("conv2d: padding must be non-negative, got padding=(-1, 0)"));
  EXPECT_THAT(error_of([&] { F::conv1d(randn({2, 3, 2}), randn({4, 3, 3}), F::Conv1dFuncOptions().stride(2).padding(kSame)); }),
              HasSubstr("conv1d: padding=same needs stride 1, got stride=(2,)"));
}

TEST(ConvErrors, ModuleOptions) {
  EXPECT_THAT(error_of([] { nn::Conv2d(nn::Conv2dOptions(6, 4, 3).groups(4)); }),
              HasSubstr("Conv2d: in_channels=6 must be divisible by groups=4"));
  EXPECT_THAT(error_of([] { nn::Conv2d(nn::Conv2dOptions(4, 6, 3).groups(4)); }),
              HasSubstr("Conv2d: out_channels=6 must be divisible by groups=4"));
  EXPECT_THAT(error_of([] { nn::Conv1d(nn::Conv1dOptions(4, 6, 3).stride(2).padding(kSame)); }),
              HasSubstr("Conv1d: padding=same needs stride 1, got stride=(2,)"));
  EXPECT_THAT(error_of([] { nn::Conv2d(nn::Conv2dOptions(4, 6, 0)); }),
              HasSubstr("Conv2d: kernel_size must be positive, got kernel_size=(0, 0)"));
  EXPECT_THAT(error_of([] { nn::Conv2d(nn::Conv2dOptions(4, 6, {1, 2, 3})); }),
              HasSubstr("ExpandingArray: expected 2 values, got 3 ([1, 2, 3])"));
  nn::Conv2d conv(3, 4, 3);
  EXPECT_THAT(error_of([&] { conv(randn({2, 2, 5, 5})); }), HasSubstr("conv2d: expected input of shape [2, 2, 5, 5] to have 3 channels"));
}

}  // namespace
}  // namespace cohort
