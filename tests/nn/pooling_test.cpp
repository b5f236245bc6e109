// Pooling through nn: F::*_pool2d's options against PyTorch's values (tests/fixtures/pool_norm.json from
// tests/fixtures/generate_pool_norm.py), reprs and errors. The kernels are tested in
// tests/ops/pooling_test.cpp, the ops' values and gradients in the op table.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/pytorch_fixture.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cohort/autograd/engine.h"
#include "cohort/core/generator.h"
#include "cohort/nn/pooling.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "support/error_of.h"

namespace cohort {
namespace {

namespace F = nn::functional;
using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::error_of;

TEST(PoolOptions, AdaptiveNulloptKeepsTheInputSize) {
  Tensor x = arange(16, kFloat64).reshape({1, 1, 4, 4});
  EXPECT_EQ(F::adaptive_avg_pool2d(x, {std::nullopt, 2}).sizes(), IntArrayRef({1, 1, 4, 2}));
  EXPECT_EQ(F::adaptive_max_pool2d(x, {3, std::nullopt}).sizes(), IntArrayRef({1, 1, 3, 4}));
}

// ---- PyTorch's values ------------------------------------------------------------------------

ExpandingArray<2> arr(const json& j) {
  auto v = j.get<std::vector<int64_t>>();
  return v.size() == 1 ? ExpandingArray<2>(v[0]) : ExpandingArray<2>(v);
}

Tensor run_case(const json& c, const Tensor& x) {
  const std::string op = c.at("op");
  if (op == "max_pool2d") {
    F::MaxPool2dFuncOptions o(arr(c.at("kernel_size")));
    if (c.contains("stride")) o.stride(arr(c.at("stride")));
    if (c.contains("padding")) o.padding(arr(c.at("padding")));
    if (c.contains("dilation")) o.dilation(arr(c.at("dilation")));
    if (c.contains("ceil_mode")) o.ceil_mode(c.at("ceil_mode").get<bool>());
    return F::max_pool2d(x, o);
  }
  if (op == "avg_pool2d") {
    F::AvgPool2dFuncOptions o(arr(c.at("kernel_size")));
    if (c.contains("stride")) o.stride(arr(c.at("stride")));
    if (c.contains("padding")) o.padding(arr(c.at("padding")));
    if (c.contains("ceil_mode")) o.ceil_mode(c.at("ceil_mode").get<bool>());
    if (c.contains("count_include_pad")) o.count_include_pad(c.at("count_include_pad").get<bool>());
    return F::avg_pool2d(x, o);
  }
  auto size = c.at("output_size").get<std::vector<int64_t>>();  // -1 stands for None
  auto opt = [](int64_t v) { return v < 0 ? std::nullopt : std::optional<int64_t>(v); };
  F::AdaptivePool2dFuncOptions o(opt(size[0]), opt(size[1]));
  return op == "adaptive_avg_pool2d" ? F::adaptive_avg_pool2d(x, o) : F::adaptive_max_pool2d(x, o);
}

TEST(PoolFixture, MatchesPyTorchValuesAndGradients) {
  const json& fixture = testing::load_fixture("pool_norm.json");
  int checked = 0;
  for (const json& c : fixture.at("pool")) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    Tensor x = testing::decode_tensor(c.at("input")).requires_grad_();
    Tensor y = run_case(c, x);
    EXPECT_TRUE(testing::matches_pytorch(name + " output", y, c.at("output")));
    auto grads = autograd::grad({(y * testing::decode_tensor(c.at("upstream"))).sum()}, {x});
    EXPECT_TRUE(testing::matches_pytorch(name + " grad input", grads[0], c.at("grad_input")));
    // The float32 path (oneDNN for max/avg) on the same numbers.
    Tensor x32 = x.detach().to(kFloat32).requires_grad_();
    Tensor y32 = run_case(c, x32);
    EXPECT_TRUE(testing::matches_pytorch(name + " float32 output", y32, c.at("output"), 1e-5));
    auto g32 = autograd::grad({(y32 * testing::decode_tensor(c.at("upstream")).to(kFloat32)).sum()}, {x32});
    EXPECT_TRUE(testing::matches_pytorch(name + " float32 grad input", g32[0], c.at("grad_input"), 1e-5));
    ++checked;
  }
  EXPECT_EQ(checked, 16);
}

// ---- modules ---------------------------------------------------------------------------------

std::string repr(const nn::Module& m) {
  std::ostringstream os;
  m.pretty_print(os);
  return os.str();
}

TEST(PoolModule, ReprLikePyTorch) {
  // Each expected string printed by torch 1.13's modules with the same arguments.
  EXPECT_EQ(repr(*nn::MaxPool2d(2)), "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)");
  EXPECT_EQ(repr(*nn::MaxPool2d(nn::MaxPool2dOptions({3, 2}).stride(1).padding(1).ceil_mode(true))),
            "MaxPool2d(kernel_size=(3, 2), stride=1, padding=1, dilation=1, ceil_mode=True)");
  EXPECT_EQ(repr(*nn::MaxPool2d(nn::MaxPool2dOptions(2).padding({1, 0}))),
            "MaxPool2d(kernel_size=2, stride=2, padding=(1, 0), dilation=1, ceil_mode=False)");
  EXPECT_EQ(repr(*nn::AvgPool2d(2)), "AvgPool2d(kernel_size=2, stride=2, padding=0)");
  EXPECT_EQ(repr(*nn::AvgPool2d(nn::AvgPool2dOptions(3).stride(2).padding(1).ceil_mode(true).count_include_pad(false))),
            "AvgPool2d(kernel_size=3, stride=2, padding=1)");
  EXPECT_EQ(repr(*nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({5, 7}))), "AdaptiveAvgPool2d(output_size=(5, 7))");
  EXPECT_EQ(repr(*nn::AdaptiveMaxPool2d(3)), "AdaptiveMaxPool2d(output_size=3)");
  EXPECT_EQ(repr(*nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions(std::nullopt, 2))),
            "AdaptiveAvgPool2d(output_size=(None, 2))");
}

TEST(PoolModule, ForwardAndClone) {
  manual_seed(15);
  nn::MaxPool2d pool(nn::MaxPool2dOptions(3).stride(2).padding(1));
  Tensor x = randn({2, 3, 8, 8});
  EXPECT_EQ(pool(x).sizes(), IntArrayRef({2, 3, 4, 4}));
  EXPECT_EQ(pool(randn({3, 8, 8})).sizes(), IntArrayRef({3, 4, 4}));
  EXPECT_TRUE(pool->parameters().empty());
  auto copy = std::dynamic_pointer_cast<nn::MaxPool2dImpl>(pool->clone());
  ASSERT_TRUE(copy);
  EXPECT_TRUE(copy->forward(x).equal(pool(x)));
  nn::AdaptiveAvgPool2d gap(nn::AdaptiveAvgPool2dOptions({1, 1}));
  EXPECT_LT(testing::max_abs_diff(gap(x).flatten(1), x.mean({2, 3})), 1e-6);
  nn::AvgPool2d avg(nn::AvgPool2dOptions(2));
  EXPECT_EQ(avg(x).sizes(), IntArrayRef({2, 3, 4, 4}));
}

// ---- errors ----------------------------------------------------------------------------------

TEST(PoolErrors, NameTheOpAndTheShapes) {
  Tensor x = randn({1, 1, 4, 4});
  EXPECT_THAT(error_of([&] { F::max_pool2d(randn({4, 4}), F::MaxPool2dFuncOptions(2)); }),
              HasSubstr("max_pool2d: expected a 3-d (unbatched) or 4-d (batched) input [N, C, H, W], got input of shape [4, 4]"));
  EXPECT_THAT(error_of([&] { F::max_pool2d(x, F::MaxPool2dFuncOptions(5)); }),
              HasSubstr("max_pool2d: window of kernel_size=(5, 5) (spanning 5) is larger than the padded input (4 = 4 + 0 "
                        "padding in spatial dim 0 of input [1, 1, 4, 4])"));
  EXPECT_THAT(error_of([&] { F::avg_pool2d(x, F::AvgPool2dFuncOptions(2).padding(2)); }),
              HasSubstr("avg_pool2d: padding should be at most half of kernel_size, got padding=(2, 2) and kernel_size=(2, 2)"));
  EXPECT_THAT(error_of([&] { F::max_pool2d(x, F::MaxPool2dFuncOptions(2).stride(0)); }),
              HasSubstr("max_pool2d: stride must be positive, got stride=(0, 0)"));
  EXPECT_THAT(error_of([&] { F::adaptive_avg_pool2d(x, 0); }),
              HasSubstr("adaptive_avg_pool2d: output_size must be positive, got 0 for spatial dim 0 of input [1, 1, 4, 4]"));
  EXPECT_THAT(error_of([&] { F::adaptive_max_pool2d(randn({1, 0, 4, 4}), 2); }),
              HasSubstr("adaptive_max_pool2d: expected non-empty channel and spatial dims, got input of shape [1, 0, 4, 4]"));
  EXPECT_THAT(error_of([&] { F::max_pool2d(ones({1, 1, 4, 4}, kInt64), F::MaxPool2dFuncOptions(2)); }),
              HasSubstr("max_pool2d: expected a floating-point input, got int64"));
  EXPECT_THAT(error_of([] { nn::MaxPool2d(nn::MaxPool2dOptions(0)); }),
              HasSubstr("MaxPool2d: kernel_size must be positive, got kernel_size=(0, 0)"));
}

}  // namespace
}  // namespace cohort
