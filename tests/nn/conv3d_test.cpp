// Conv3d and ConvTranspose3d through nn: F::conv3d / F::conv_transpose3d against PyTorch's values and
// gradients (tests/fixtures/vision_ops.json from tests/fixtures/generate_vision_ops.py), in float64
// and on the float32 (oneDNN) path; the modules' reprs (torch 1.13's), parameters and errors.
// Gradients to second order are in the op table (tests/ops/op_table_vision_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cohort/autograd/engine.h"
#include "cohort/core/generator.h"
#include "cohort/nn/conv.h"
#include "cohort/ops/autocast.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "support/error_of.h"
#include "support/pytorch_fixture.h"

namespace cohort {
namespace {

namespace F = nn::functional;
using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::error_of;

ExpandingArray<3> arr(const json& c, const char* key, int64_t fallback) {
  if (!c.contains(key)) return ExpandingArray<3>(fallback);
  const auto v = c.at(key).get<std::vector<int64_t>>();
  return v.size() == 1 ? ExpandingArray<3>(v[0]) : ExpandingArray<3>(v);
}

Tensor run_case(const json& c, const Tensor& x, const Tensor& w, const Tensor& b) {
  const int64_t groups = c.value("groups", 1);
  if (c.at("op") == "conv3d") {
    auto o = F::Conv3dFuncOptions().bias(b).stride(arr(c, "stride", 1)).dilation(arr(c, "dilation", 1)).groups(groups);
    if (c.contains("padding") && c.at("padding").is_string()) o.padding(kSame);
    else o.padding(arr(c, "padding", 0));
    return F::conv3d(x, w, o);
  }
  return F::conv_transpose3d(x, w, F::ConvTranspose3dFuncOptions()
                                        .bias(b)
                                        .stride(arr(c, "stride", 1))
                                        .padding(arr(c, "padding", 0))
                                        .output_padding(arr(c, "output_padding", 0))
                                        .dilation(arr(c, "dilation", 1))
                                        .groups(groups));
}

TEST(Conv3dFixture, MatchesPyTorchValuesAndGradients) {
  const json& fixture = testing::load_fixture("vision_ops.json");
  int checked = 0;
  for (const json& c : fixture.at("conv")) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    for (DType dtype : {kFloat64, kFloat32}) {
      const double tol = dtype == kFloat64 ? 1e-10 : 2e-5;
      Tensor x = testing::decode_tensor(c.at("input")).to(dtype).requires_grad_();
      Tensor w = testing::decode_tensor(c.at("weight")).to(dtype).requires_grad_();
      Tensor b = c.at("bias").is_null() ? Tensor() : testing::decode_tensor(c.at("bias")).to(dtype).requires_grad_();
      Tensor y = run_case(c, x, w, b);
      EXPECT_TRUE(testing::matches_pytorch(name + " output", y, c.at("output"), tol));
      std::vector<Tensor> wrt{x, w};
      if (b.defined()) wrt.push_back(b);
      auto grads = autograd::grad({(y * testing::decode_tensor(c.at("upstream")).to(dtype)).sum()}, wrt);
      EXPECT_TRUE(testing::matches_pytorch(name + " grad input", grads[0], c.at("grad_input"), tol));
      EXPECT_TRUE(testing::matches_pytorch(name + " grad weight", grads[1], c.at("grad_weight"), tol));
      if (b.defined()) EXPECT_TRUE(testing::matches_pytorch(name + " grad bias", grads[2], c.at("grad_bias"), tol));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 8);
}

// PyTorch 1.13's CPU autocast runs conv3d in the region's dtype and conv_transpose3d in float32
// (checked with torch.autocast("cpu", dtype=torch.bfloat16)).
TEST(Conv3dAutocast, FollowsPyTorchsPolicy) {
  Tensor x = randn({1, 2, 3, 4, 4}), w = randn({2, 2, 2, 2, 2});
  autocast::AutocastGuard region(kBFloat16);
  EXPECT_EQ(F::conv3d(x, w).dtype(), kBFloat16);
  EXPECT_EQ(F::conv_transpose3d(x, w).dtype(), kFloat32);
  EXPECT_EQ(F::conv_transpose3d(x.to(kBFloat16), w.to(kBFloat16)).dtype(), kFloat32);
}

std::string repr(const nn::Module& m) {
  std::ostringstream os;
  m.pretty_print(os);
  return os.str();
}

TEST(Conv3dModule, ReprLikePyTorch) {
  // Each expected string printed by torch 1.13's modules with the same arguments.
  EXPECT_EQ(repr(*nn::Conv3d(2, 4, 3)), "Conv3d(2, 4, kernel_size=(3, 3, 3), stride=(1, 1, 1))");
  EXPECT_EQ(repr(*nn::Conv3d(nn::Conv3dOptions(4, 6, {1, 3, 3}).stride({1, 2, 2}).padding({0, 1, 1}).groups(2).bias(false))),
            "Conv3d(4, 6, kernel_size=(1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1), groups=2, bias=False)");
  EXPECT_EQ(repr(*nn::Conv3d(nn::Conv3dOptions(2, 2, {2, 3, 3}).padding(kSame).dilation(2))),
            "Conv3d(2, 2, kernel_size=(2, 3, 3), stride=(1, 1, 1), padding=same, dilation=(2, 2, 2))");
  EXPECT_EQ(repr(*nn::ConvTranspose3d(nn::ConvTranspose3dOptions(4, 2, 3).stride(2).padding(1).output_padding(1))),
            "ConvTranspose3d(4, 2, kernel_size=(3, 3, 3), stride=(2, 2, 2), padding=(1, 1, 1), output_padding=(1, 1, 1))");
  EXPECT_EQ(repr(*nn::ConvTranspose3d(nn::ConvTranspose3dOptions(4, 4, 2).groups(2).bias(false))),
            "ConvTranspose3d(4, 4, kernel_size=(2, 2, 2), stride=(1, 1, 1), groups=2, bias=False)");
}

TEST(Conv3dModule, ParametersInitAndForward) {
  manual_seed(9);
  nn::Conv3d conv(nn::Conv3dOptions(4, 6, {3, 2, 2}).stride(2).padding(1).groups(2));
  EXPECT_EQ(conv->weight.sizes(), IntArrayRef({6, 2, 3, 2, 2}));
  EXPECT_EQ(conv->named_parameters().keys(), (std::vector<std::string>{"weight", "bias"}));
  const double bound = 1 / std::sqrt(24.0);  // fan_in = 2 * 3 * 2 * 2
  EXPECT_LE(conv->weight.abs().max().item<float>(), bound);
  EXPECT_GT(conv->weight.abs().max().item<float>(), bound * 0.7);
  Tensor y = conv(randn({2, 4, 5, 6, 7}));
  EXPECT_EQ(y.sizes(), IntArrayRef({2, 6, 3, 4, 4}));
  EXPECT_TRUE(y.is_contiguous());
  y.sum().backward();
  EXPECT_EQ(conv->weight.grad().sizes(), conv->weight.sizes());
  EXPECT_EQ(conv(randn({4, 5, 6, 7})).sizes(), IntArrayRef({6, 3, 4, 4}));
  auto copy = std::dynamic_pointer_cast<nn::Conv3dImpl>(conv->clone());
  ASSERT_TRUE(copy);
  EXPECT_TRUE(copy->weight.equal(conv->weight));

  nn::ConvTranspose3d up(nn::ConvTranspose3dOptions(4, 2, 4).stride(2).padding(1));
  EXPECT_EQ(up->weight.sizes(), IntArrayRef({4, 2, 4, 4, 4}));
  Tensor v = randn({1, 4, 3, 5, 5});
  EXPECT_EQ(up(v).sizes(), IntArrayRef({1, 2, 6, 10, 10}));
  EXPECT_EQ(up->forward(v, std::vector<int64_t>{7, 11, 10}).sizes(), IntArrayRef({1, 2, 7, 11, 10}));
  EXPECT_EQ(up->name(), "ConvTranspose3d");
}

TEST(Conv3dErrors, NameTheOpAndTheShapes) {
  Tensor x = randn({2, 4, 5, 5, 5}), w = randn({6, 2, 3, 3, 3});
  auto g2 = F::Conv3dFuncOptions().groups(2);
  EXPECT_THAT(error_of([&] { F::conv3d(randn({4, 5, 5}), w, g2); }),
              HasSubstr("conv3d: expected a 4-d (unbatched) or 5-d (batched) input [N, C, D, H, W], got input of shape "
                        "[4, 5, 5]"));
  EXPECT_THAT(error_of([&] { F::conv3d(x, randn({6, 4, 3, 3})); }),
              HasSubstr("conv3d: expected a 5-d weight [out_channels, in_channels / groups, kD, kH, kW], got weight of "
                        "shape [6, 4, 3, 3]"));
  EXPECT_THAT(error_of([&] { F::conv3d(x, w); }),
              HasSubstr("conv3d: expected input of shape [2, 4, 5, 5, 5] to have 2 channels"));
  EXPECT_THAT(error_of([&] { F::conv3d(randn({2, 4, 2, 5, 5}), w, g2); }),
              HasSubstr("conv3d: kernel of weight [6, 2, 3, 3, 3] (spanning 3 with dilation=(1, 1, 1)) is larger than "
                        "the padded input (2 = 2 + 0 padding in spatial dim 0 of input [2, 4, 2, 5, 5])"));
  EXPECT_THAT(error_of([&] { F::conv3d(x, w, F::Conv3dFuncOptions().groups(2).stride({1, 2, 1}).padding(kSame)); }),
              HasSubstr("conv3d: padding=same needs stride 1, got stride=(1, 2, 1)"));
  EXPECT_THAT(error_of([&] {
                F::conv_transpose3d(x, randn({4, 3, 2, 2, 2}), F::ConvTranspose3dFuncOptions().stride(2).output_padding({0, 2, 0}));
              }),
              HasSubstr("conv_transpose3d: output_padding must be smaller than either stride or dilation, got "
                        "output_padding=(0, 2, 0), stride=(2, 2, 2), dilation=(1, 1, 1)"));
  EXPECT_THAT(error_of([] { nn::Conv3d(nn::Conv3dOptions(3, 4, 2).groups(2)); }),
              HasSubstr("Conv3d: in_channels=3 must be divisible by groups=2"));
  EXPECT_THAT(error_of([] { nn::ConvTranspose3d(nn::ConvTranspose3dOptions(4, 4, {2, 0, 2})); }),
              HasSubstr("ConvTranspose3d: kernel_size must be positive, got kernel_size=(2, 0, 2)"));
}

}  // namespace
}  // namespace cohort
