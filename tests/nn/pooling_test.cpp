// Pooling: the max pool's loops against the plainest ones, float64 gradcheck, PyTorch's values
// (tests/fixtures/pool_norm.json from tests/fixtures/generate_pool_norm.py), reprs and errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/pytorch_fixture.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "../src/ops/cpu/pooling_kernels.h"
#include "cohort/autograd/engine.h"
#include "cohort/autograd/node.h"
#include "cohort/core/generator.h"
#include "cohort/nn/pooling.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "support/error_of.h"
#include "support/gradcheck.h"

namespace cohort {
namespace {

namespace F = nn::functional;
using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::error_of;

double max_diff(const Tensor& a, const Tensor& b) {
  return (a.detach().to(kFloat64) - b.detach().to(kFloat64)).abs().max().item<double>();
}

// ---- the max pool's loops against the plainest ones -------------------------------------------

TEST(PoolKernels, MaxLoopsMatchReferenceOnRandomShapes) {
  std::mt19937 rng(11);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  manual_seed(12);
  for (int trial = 0; trial < 60; ++trial) {
    const bool ceil_mode = trial % 3 == 0;
    F::MaxPool2dFuncOptions mo({pick(1, 4), pick(1, 4)});
    mo.stride({pick(1, 3), pick(1, 3)}).padding({pick(0, mo.kernel_size()[0] / 2), pick(0, mo.kernel_size()[1] / 2)});
    mo.dilation(trial % 4 == 0 ? ExpandingArray<2>({pick(1, 2), pick(1, 2)}) : ExpandingArray<2>(1));
    mo.ceil_mode(ceil_mode);
    if (trial % 7 == 2) mo = F::MaxPool2dFuncOptions(2).stride(2).ceil_mode(ceil_mode);  // the 2x2 row loop
    const int64_t H = (mo.kernel_size()[0] - 1) * mo.dilation()[0] + 1 + pick(0, 6);
    const int64_t W = (mo.kernel_size()[1] - 1) * mo.dilation()[1] + 1 + pick(0, 6);
    Tensor x = randn({pick(1, 3), pick(1, 4), H, W});
    if (trial % 5 == 1) x = testing::make_noncontiguous(x);
    std::ostringstream what;
    what << "input " << x.sizes() << " kernel " << mo.kernel_size() << " stride " << mo.stride() << " padding "
         << mo.padding() << " dilation " << mo.dilation() << " ceil " << ceil_mode;
    SCOPED_TRACE(what.str());
    // The output size from the op, then both kernels on the same geometry.
    Tensor y = F::max_pool2d(x, mo);
    kernel::Pool2dParams p;
    for (int d = 0; d < 2; ++d)
      p.kernel[d] = mo.kernel_size()[d], p.stride[d] = mo.stride()[d], p.padding[d] = mo.padding()[d],
      p.dilation[d] = mo.dilation()[d];
    Tensor y_fast = empty(y.sizes()), y_ref = empty(y.sizes()), indices = empty(y.sizes(), kInt64);
    Tensor saved = kernel::max_pool2d_forward(y_fast, x, p);
    kernel::max_pool2d_forward_reference(y_ref, indices, x, p);
    EXPECT_TRUE(equal(y_fast, y_ref)) << "forward";
    EXPECT_TRUE(equal(y, y_ref)) << "op";
    EXPECT_TRUE(equal(saved, indices)) << "argmax";
  }
}

TEST(PoolKernels, MaxLoopsMatchReferenceWithNaNsOddSizesAndStrides) {
  // The 2x2 / stride 2 body and the general one, on odd sizes (the last row and column unused),
  // strided input and NaNs (the first NaN of a window wins, its index too).
  manual_seed(14);
  for (DType dtype : {kFloat32, kFloat64})
    for (int k : {2, 3})
      for (bool strided : {false, true}) {
        Tensor x = randn({2, 3, 9, 11}, dtype);
        x.select(3, 4).select(2, 2).fill_(std::nan(""));  // plane (n, c) = (0..1, 2), h 4
        x.select(3, 5).select(2, 1).fill_(std::nan(""));
        if (strided) x = testing::make_noncontiguous(x);
        kernel::Pool2dParams p;
        p.kernel = {k, k}, p.stride = {2, 2};
        Tensor y = empty({2, 3, 9 / 2 - (k == 3), 11 / 2 - (k == 3)}, dtype), y_ref = empty(y.sizes(), dtype);
        Tensor indices = empty(y.sizes(), kInt64);
        Tensor saved = kernel::max_pool2d_forward(y, x, p);
        kernel::max_pool2d_forward_reference(y_ref, indices, x, p);
        SCOPED_TRACE(::testing::Message() << "dtype " << dtype << " kernel " << k << " strided " << strided);
        EXPECT_TRUE(equal(saved, indices));
        EXPECT_TRUE(equal(isnan(y), isnan(y_ref)));
        EXPECT_TRUE(equal(y.masked_fill(isnan(y), 0), y_ref.masked_fill(isnan(y_ref), 0)));
        EXPECT_GT(isnan(y).sum().item<int64_t>(), 0);
      }
}

TEST(PoolKernels, Float32OpMatchesFloat64Op) {
  manual_seed(13);
  Tensor x = randn({2, 3, 9, 8}).requires_grad_();
  Tensor x64 = x.detach().to(kFloat64).requires_grad_();
  auto run = [](const Tensor& t) {
    return std::vector<Tensor>{
        F::max_pool2d(t, F::MaxPool2dFuncOptions(3).stride(2).padding(1).ceil_mode(true)),
        F::avg_pool2d(t, F::AvgPool2dFuncOptions({3, 2}).stride(2).padding(1).ceil_mode(true)),
        F::avg_pool2d(t, F::AvgPool2dFuncOptions(2).count_include_pad(false).padding(1)),
        F::adaptive_avg_pool2d(t, {4, 3}), F::adaptive_max_pool2d(t, {5, 5})};
  };
  auto y32 = run(x), y64 = run(x64);
  for (size_t i = 0; i < y32.size(); ++i) {
    EXPECT_LT(max_diff(y32[i], y64[i]), 1e-5) << "output " << i;
    auto g32 = autograd::grad({y32[i].sum()}, {x}), g64 = autograd::grad({y64[i].sum()}, {x64});
    EXPECT_LT(max_diff(g32[0], g64[0]), 1e-5) << "grad " << i;
  }
}

// ---- gradients -------------------------------------------------------------------------------

TEST(PoolGradcheck, AllPools) {
  manual_seed(14);
  // Distinct, well separated values keep max pooling differentiable under the perturbation.
  Tensor x = (randperm(2 * 2 * 7 * 6, kFloat64) * 0.1).reshape({2, 2, 7, 6});
  const std::vector<std::pair<std::string, std::function<Tensor(const Tensor&)>>> ops = {
      {"max_pool2d", [](const Tensor& t) { return F::max_pool2d(t, F::MaxPool2dFuncOptions(3).stride(2).padding(1)); }},
      {"max_pool2d ceil dilation", [](const Tensor& t) {
         return F::max_pool2d(t, F::MaxPool2dFuncOptions({2, 3}).dilation(2).ceil_mode(true));
       }},
      {"avg_pool2d", [](const Tensor& t) { return F::avg_pool2d(t, F::AvgPool2dFuncOptions(3).stride(2).padding(1)); }},
      {"avg_pool2d ceil exclude", [](const Tensor& t) {
         return F::avg_pool2d(t, F::AvgPool2dFuncOptions({3, 2}).stride(2).padding(1).ceil_mode(true).count_include_pad(false));
       }},
      {"adaptive_avg_pool2d", [](const Tensor& t) { return F::adaptive_avg_pool2d(t, {3, 4}); }},
      {"adaptive_avg_pool2d grow", [](const Tensor& t) { return F::adaptive_avg_pool2d(t, {9, 8}); }},
      {"adaptive_max_pool2d", [](const Tensor& t) { return F::adaptive_max_pool2d(t, {4, 5}); }},
      {"max_pool2d unbatched", [](const Tensor& t) { return F::max_pool2d(t.select(0, 1), F::MaxPool2dFuncOptions(2)); }},
  };
  for (const auto& [name, op] : ops) {
    auto fn = [&](const std::vector<Tensor>& t) { return std::vector<Tensor>{op(t[0])}; };
    EXPECT_TRUE(testing::gradcheck(fn, {x}, 1e-6, 1e-5, 1e-3, name));
    EXPECT_TRUE(testing::gradcheck_noncontiguous(fn, {x}, 1e-6, 1e-5, 1e-3, name + " (non-contiguous)"));
  }
}

TEST(PoolOps, IndicesAndNodeNames) {
  Tensor x = arange(16, kFloat64).reshape({1, 1, 4, 4}).requires_grad_();
  auto [y, indices] = F::max_pool2d_with_indices(x, F::MaxPool2dFuncOptions(2));
  EXPECT_TRUE(indices.equal(tensor({5, 7, 13, 15}, kInt64).reshape({1, 1, 2, 2})));
  EXPECT_EQ(y.grad_fn()->name(), "MaxPool2DWithIndicesBackward0");
  EXPECT_EQ(F::avg_pool2d(x, F::AvgPool2dFuncOptions(2)).grad_fn()->name(), "AvgPool2DBackward0");
  EXPECT_EQ(F::adaptive_avg_pool2d(x, 1).grad_fn()->name(), "AdaptiveAvgPool2DBackward0");
  auto [ya, ia] = F::adaptive_max_pool2d_with_indices(x, {1, 2});
  EXPECT_TRUE(ia.equal(tensor({13, 15}, kInt64).reshape({1, 1, 1, 2})));
  EXPECT_EQ(ya.grad_fn()->name(), "AdaptiveMaxPool2DBackward0");
  EXPECT_EQ(F::adaptive_avg_pool2d(x, {std::nullopt, 2}).sizes(), IntArrayRef({1, 1, 4, 2}));
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
  EXPECT_LT(max_diff(gap(x).flatten(1), x.mean({2, 3})), 1e-6);
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
              HasSubstr("max_pool2d: expected a floating-point input (float32 or float64), got int64"));
  EXPECT_THAT(error_of([] { nn::MaxPool2d(nn::MaxPool2dOptions(0)); }),
              HasSubstr("MaxPool2d: kernel_size must be positive, got kernel_size=(0, 0)"));
}

}  // namespace
}  // namespace cohort
