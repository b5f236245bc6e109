// The 1-d and 3-d pools through nn: F::*_pool1d/3d's options against PyTorch's values, indices and
// gradients (tests/fixtures/vision_ops.json from tests/fixtures/generate_vision_ops.py), the
// modules' reprs (torch 1.13's) and errors. The ops' gradients to second order are in the op table
// (tests/ops/op_table_vision_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cohort/autograd/engine.h"
#include "cohort/core/generator.h"
#include "cohort/nn/pooling.h"
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

template <size_t D>
ExpandingArray<D> arr(const json& j) {
  auto v = j.get<std::vector<int64_t>>();
  return v.size() == 1 ? ExpandingArray<D>(v[0]) : ExpandingArray<D>(v);
}

template <size_t D>
nn::MaxPoolOptions<D> max_options(const json& c) {
  nn::MaxPoolOptions<D> o(arr<D>(c.at("kernel_size")));
  if (c.contains("stride")) o.stride(arr<D>(c.at("stride")));
  if (c.contains("padding")) o.padding(arr<D>(c.at("padding")));
  if (c.contains("dilation")) o.dilation(arr<D>(c.at("dilation")));
  if (c.contains("ceil_mode")) o.ceil_mode(c.at("ceil_mode").get<bool>());
  return o;
}

template <size_t D>
nn::AvgPoolOptions<D> avg_options(const json& c) {
  nn::AvgPoolOptions<D> o(arr<D>(c.at("kernel_size")));
  if (c.contains("stride")) o.stride(arr<D>(c.at("stride")));
  if (c.contains("padding")) o.padding(arr<D>(c.at("padding")));
  if (c.contains("ceil_mode")) o.ceil_mode(c.at("ceil_mode").get<bool>());
  if (c.contains("count_include_pad")) o.count_include_pad(c.at("count_include_pad").get<bool>());
  return o;
}

F::AdaptivePool3dFuncOptions adaptive3d(const json& c) {
  auto size = c.at("output_size").get<std::vector<int64_t>>();  // -1 stands for None
  auto opt = [](int64_t v) { return v < 0 ? std::nullopt : std::optional<int64_t>(v); };
  if (size.size() == 1) return F::AdaptivePool3dFuncOptions(size[0]);
  return F::AdaptivePool3dFuncOptions(opt(size[0]), opt(size[1]), opt(size[2]));
}

// The output and, for max pools, the indices.
std::tuple<Tensor, Tensor> run_case(const json& c, const Tensor& x) {
  const std::string op = c.at("op");
  if (op == "max_pool1d") return F::max_pool1d_with_indices(x, max_options<1>(c));
  if (op == "max_pool3d") return F::max_pool3d_with_indices(x, max_options<3>(c));
  if (op == "avg_pool1d") return {F::avg_pool1d(x, avg_options<1>(c)), Tensor()};
  if (op == "avg_pool3d") return {F::avg_pool3d(x, avg_options<3>(c)), Tensor()};
  const int64_t size1 = c.at("output_size").at(0).get<int64_t>();
  if (op == "adaptive_avg_pool1d") return {F::adaptive_avg_pool1d(x, size1), Tensor()};
  if (op == "adaptive_max_pool1d") return F::adaptive_max_pool1d_with_indices(x, size1);
  if (op == "adaptive_avg_pool3d") return {F::adaptive_avg_pool3d(x, adaptive3d(c)), Tensor()};
  return F::adaptive_max_pool3d_with_indices(x, adaptive3d(c));
}

TEST(PoolNdFixture, MatchesPyTorchValuesIndicesAndGradients) {
  const json& fixture = testing::load_fixture("vision_ops.json");
  int checked = 0;
  for (const json& c : fixture.at("pool")) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    Tensor x = testing::decode_tensor(c.at("input")).requires_grad_();
    auto [y, indices] = run_case(c, x);
    EXPECT_TRUE(testing::matches_pytorch(name + " output", y, c.at("output")));
    if (c.contains("indices")) EXPECT_TRUE(testing::matches_pytorch(name + " indices", indices, c.at("indices")));
    auto grads = autograd::grad({(y * testing::decode_tensor(c.at("upstream"))).sum()}, {x});
    EXPECT_TRUE(testing::matches_pytorch(name + " grad input", grads[0], c.at("grad_input")));
    Tensor x32 = x.detach().to(kFloat32).requires_grad_();
    Tensor y32 = std::get<0>(run_case(c, x32));
    EXPECT_TRUE(testing::matches_pytorch(name + " float32 output", y32, c.at("output"), 1e-5));
    ++checked;
  }
  EXPECT_EQ(checked, 19);
}

std::string repr(const nn::Module& m) {
  std::ostringstream os;
  m.pretty_print(os);
  return os.str();
}

TEST(PoolNdModule, ReprLikePyTorch) {
  // Each expected string printed by torch 1.13's modules with the same arguments.
  EXPECT_EQ(repr(*nn::MaxPool1d(2)), "MaxPool1d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)");
  EXPECT_EQ(repr(*nn::MaxPool1d(nn::MaxPool1dOptions(3).stride(2).padding(1).dilation(2))),
            "MaxPool1d(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=False)");
  EXPECT_EQ(repr(*nn::AvgPool1d(3)), "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))");
  EXPECT_EQ(repr(*nn::AvgPool1d(nn::AvgPool1dOptions(3).stride(2).padding(1))),
            "AvgPool1d(kernel_size=(3,), stride=(2,), padding=(1,))");
  EXPECT_EQ(repr(*nn::MaxPool3d(2)), "MaxPool3d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)");
  EXPECT_EQ(repr(*nn::MaxPool3d(nn::MaxPool3dOptions({2, 3, 2}))),
            "MaxPool3d(kernel_size=(2, 3, 2), stride=(2, 3, 2), padding=0, dilation=1, ceil_mode=False)");
  EXPECT_EQ(repr(*nn::AvgPool3d(2)), "AvgPool3d(kernel_size=2, stride=2, padding=0)");
  EXPECT_EQ(repr(*nn::AvgPool3d(nn::AvgPool3dOptions({1, 2, 2}).padding({0, 1, 1}))),
            "AvgPool3d(kernel_size=(1, 2, 2), stride=(1, 2, 2), padding=(0, 1, 1))");
  EXPECT_EQ(repr(*nn::AdaptiveAvgPool1d(5)), "AdaptiveAvgPool1d(output_size=5)");
  EXPECT_EQ(repr(*nn::AdaptiveMaxPool1d(5)), "AdaptiveMaxPool1d(output_size=5)");
  EXPECT_EQ(repr(*nn::AdaptiveAvgPool3d(2)), "AdaptiveAvgPool3d(output_size=2)");
  EXPECT_EQ(repr(*nn::AdaptiveAvgPool3d(nn::AdaptiveAvgPool3dOptions(2, std::nullopt, 3))),
            "AdaptiveAvgPool3d(output_size=(2, None, 3))");
  EXPECT_EQ(repr(*nn::AdaptiveMaxPool3d(nn::AdaptiveMaxPool3dOptions({1, 2, 3}))),
            "AdaptiveMaxPool3d(output_size=(1, 2, 3))");
}

TEST(PoolNdModule, ForwardNameAndClone) {
  manual_seed(16);
  Tensor x = randn({2, 3, 8});
  nn::MaxPool1d pool(nn::MaxPool1dOptions(3).stride(2).padding(1));
  EXPECT_EQ(pool(x).sizes(), IntArrayRef({2, 3, 4}));
  EXPECT_EQ(pool->name(), "MaxPool1d");
  auto [v, i] = pool->forward_with_indices(x);
  EXPECT_TRUE(v.equal(pool(x)));
  EXPECT_EQ(i.dtype(), kInt64);
  auto copy = std::dynamic_pointer_cast<nn::MaxPool1dImpl>(pool->clone());
  ASSERT_TRUE(copy);
  EXPECT_TRUE(copy->forward(x).equal(pool(x)));
  EXPECT_LT(testing::max_abs_diff(nn::AdaptiveAvgPool1d(1)(x).squeeze(-1), x.mean({2})), 1e-6);
  Tensor v3 = randn({2, 3, 4, 6, 6});
  nn::AvgPool3d avg(2);
  EXPECT_EQ(avg(v3).sizes(), IntArrayRef({2, 3, 2, 3, 3}));
  EXPECT_EQ(avg->name(), "AvgPool3d");
  EXPECT_EQ(nn::MaxPool3d(nn::MaxPool3dOptions(2).stride(1))(v3).sizes(), IntArrayRef({2, 3, 3, 5, 5}));
  EXPECT_LT(testing::max_abs_diff(nn::AdaptiveAvgPool3d(1)(v3).flatten(1), v3.mean({2, 3, 4})), 1e-6);
  EXPECT_LT(testing::max_abs_diff(nn::AdaptiveMaxPool3d(1)(v3).flatten(1), v3.amax({2, 3, 4})), 1e-6);
  EXPECT_EQ(nn::AdaptiveMaxPool1d(4)(x).sizes(), IntArrayRef({2, 3, 4}));
}

TEST(PoolNdErrors, NameTheOpAndTheValues) {
  EXPECT_THAT(error_of([] { F::max_pool1d(randn({4}), F::MaxPool1dFuncOptions(2)); }),
              HasSubstr("max_pool1d: expected a 2-d (unbatched) or 3-d (batched) input [N, C, L], got input of shape [4]"));
  EXPECT_THAT(error_of([] { F::avg_pool1d(randn({1, 2, 4}), F::AvgPool1dFuncOptions(2).padding(2)); }),
              HasSubstr("avg_pool1d: padding should be at most half of kernel_size, got padding=(2,) and kernel_size=(2,)"));
  EXPECT_THAT(error_of([] { F::max_pool1d(randn({1, 2, 4}), F::MaxPool1dFuncOptions(5)); }),
              HasSubstr("max_pool1d: window of kernel_size=(5,) (spanning 5) is larger than the padded input (4 = 4 + 0 "
                        "padding in spatial dim 0 of input [1, 2, 4])"));
  EXPECT_THAT(error_of([] { F::adaptive_avg_pool1d(randn({1, 2, 4}), 0); }),
              HasSubstr("adaptive_avg_pool1d: output_size must be positive, got 0 for spatial dim 0 of input [1, 2, 4]"));
  EXPECT_THAT(error_of([] { F::max_pool3d(randn({2, 4, 4}), F::MaxPool3dFuncOptions(2)); }),
              HasSubstr("max_pool3d: expected a 4-d (unbatched) or 5-d (batched) input [N, C, D, H, W], got input of shape [2, 4, 4]"));
  EXPECT_THAT(error_of([] { F::avg_pool3d(randn({1, 1, 4, 4, 4}), F::AvgPool3dFuncOptions(2).stride({1, 0, 1})); }),
              HasSubstr("avg_pool3d: stride must be positive, got stride=(1, 0, 1)"));
  EXPECT_THAT(error_of([] { F::adaptive_max_pool3d(ones({1, 1, 2, 2, 2}, kInt64), 1); }),
              HasSubstr("adaptive_max_pool3d: expected a floating-point input, got int64"));
  EXPECT_THAT(error_of([] { nn::MaxPool3d(nn::MaxPool3dOptions({2, 0, 2})); }),
              HasSubstr("MaxPool3d: kernel_size must be positive, got kernel_size=(2, 0, 2)"));
  EXPECT_THAT(error_of([] { F::AdaptiveAvgPool3dFuncOptions({1, 2}); }),
              HasSubstr("AdaptivePool3dFuncOptions: expected 3 output sizes, got 2"));
}

}  // namespace
}  // namespace cohort
