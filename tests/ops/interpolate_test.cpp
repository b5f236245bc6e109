// upsample_nearest2d / upsample_bilinear2d (through nn::functional::interpolate): values and gradients
// against PyTorch (tests/fixtures/vision.json, generate_vision.py) in float64 and float32; gradcheck and
// gradgradcheck in float64, also on strided inputs; option errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cohort/autograd/engine.h"
#include "cohort/nn/functional/vision.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/interpolate.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "support/error_of.h"
#include "support/gradcheck.h"
#include "support/pytorch_fixture.h"

using namespace cohort;
namespace F = cohort::nn::functional;
using json = nlohmann::json;
using ::testing::HasSubstr;
using cohort::testing::error_of;

namespace {

F::InterpolateFuncOptions options_of(const json& o) {
  F::InterpolateFuncOptions opt;
  opt.mode(o.at("mode") == "nearest" ? kNearest : kBilinear);
  if (o.contains("size")) opt.size(o.at("size").get<std::vector<int64_t>>());
  if (o.contains("scale_factor")) {
    const json& s = o.at("scale_factor");
    opt.scale_factor(s.is_array() ? s.get<std::vector<double>>() : std::vector<double>{s.get<double>()});
  }
  if (o.contains("align_corners")) opt.align_corners(o.at("align_corners").get<bool>());
  if (o.contains("recompute_scale_factor")) opt.recompute_scale_factor(o.at("recompute_scale_factor").get<bool>());
  if (o.contains("antialias")) opt.antialias(o.at("antialias").get<bool>());
  return opt;
}

TEST(Interpolate, MatchesPyTorchValuesAndGradients) {
  const json& cases = cohort::testing::load_fixture("vision.json").at("interpolate");
  int checked = 0;
  for (const auto& [name, c] : cases.items()) {
    SCOPED_TRACE(name);
    const auto opt = options_of(c.at("options"));
    Tensor up = cohort::testing::decode_tensor(c.at("upstream"));
    for (DType dtype : {kFloat64, kFloat32}) {
      const double tol = dtype == kFloat64 ? 1e-10 : 1e-5;
      Tensor x = cohort::testing::decode_tensor(c.at("input")).to(dtype).requires_grad_();
      Tensor y = F::interpolate(x, opt);
      EXPECT_TRUE(cohort::testing::matches_pytorch(name + " output", y, c.at("output"), tol));
      auto g = autograd::grad({(y * up.to(dtype)).sum()}, {x});
      EXPECT_TRUE(cohort::testing::matches_pytorch(name + " grad", g[0], c.at("grad"), tol));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 16);
}

TEST(Interpolate, GradcheckAndGradgradcheckInFloat64) {
  Tensor x = randn({2, 2, 5, 6}, TensorOptions(kFloat64));
  struct Case {
    const char* name;
    std::function<Tensor(const Tensor&)> fn;
  };
  const std::vector<Case> cases = {
      {"nearest", [](const Tensor& t) { return upsample_nearest2d(t, {7, 4}); }},
      {"bilinear", [](const Tensor& t) { return upsample_bilinear2d(t, {8, 3}, false); }},
      {"bilinear_corners", [](const Tensor& t) { return upsample_bilinear2d(t, {3, 9}, true); }},
      {"antialias", [](const Tensor& t) { return upsample_bilinear2d(t, {2, 4}, false, {}, {}, true); }},
      {"antialias_scale", [](const Tensor& t) { return upsample_bilinear2d(t, {2, 2}, false, 0.45, 0.4, true); }},
  };
  for (const auto& c : cases) {
    auto fn = [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{c.fn(in[0])}; };
    EXPECT_TRUE(cohort::testing::gradcheck(fn, {x}, 1e-6, 1e-5, 1e-3, c.name));
    EXPECT_TRUE(cohort::testing::gradcheck_noncontiguous(fn, {x}, 1e-6, 1e-5, 1e-3, c.name));
    EXPECT_TRUE(cohort::testing::gradgradcheck(fn, {x}, 1e-6, 1e-5, 1e-3, c.name));
  }
}

TEST(Interpolate, StridedInputsGiveTheSameValues) {
  Tensor x = randn({1, 3, 6, 7});
  Tensor strided = cohort::testing::make_noncontiguous(x);
  EXPECT_EQ(cohort::testing::max_abs_diff(upsample_bilinear2d(strided, {4, 5}, false, {}, {}, true),
                                  upsample_bilinear2d(x, {4, 5}, false, {}, {}, true)),
            0.0);
  EXPECT_EQ(cohort::testing::max_abs_diff(upsample_nearest2d(strided, {9, 2}), upsample_nearest2d(x, {9, 2})), 0.0);
}

TEST(Interpolate, ErrorsNameTheOption) {
  Tensor x = zeros({1, 1, 4, 4});
  EXPECT_THAT(error_of([&] { F::interpolate(x, F::InterpolateFuncOptions()); }),
              HasSubstr("interpolate: give exactly one of size and scale_factor, got neither"));
  EXPECT_THAT(error_of([&] {
                F::interpolate(x, F::InterpolateFuncOptions().size(std::vector<int64_t>{2, 2}).scale_factor(
                                      std::vector<double>{2}));
              }),
              HasSubstr("got both"));
  EXPECT_THAT(error_of([&] {
                F::interpolate(x, F::InterpolateFuncOptions().size(std::vector<int64_t>{2, 2}).align_corners(true));
              }),
              HasSubstr("align_corners can only be set with mode kBilinear"));
  EXPECT_THAT(error_of([&] { F::interpolate(zeros({4, 4}), F::InterpolateFuncOptions().size(std::vector<int64_t>{2})); }),
              HasSubstr("expected a 4-d input [N, C, H, W]"));
  EXPECT_THAT(error_of([&] { upsample_bilinear2d(x, {0, 2}, false); }),
              HasSubstr("upsample_bilinear2d: output_size must be two sizes {H_out, W_out} >= 1, got [0, 2]"));
  EXPECT_THAT(error_of([&] { upsample_nearest2d(zeros({1, 1, 4, 4}, TensorOptions(kInt64)), {2, 2}); }),
              HasSubstr("expected a floating-point input"));
}

}  // namespace

// bfloat16 and float16 resample in float32 and round once: the float32 result rounded, forward and
// backward (the gradient of a narrow input is narrow too).
TEST(Interpolate, NarrowDtypesAreTheFloat32ResultRounded) {
  manual_seed(4);
  Tensor x = randn({2, 3, 5, 7});
  for (DType t : {kBFloat16, kFloat16}) {
    for (bool antialias : {false, true}) {
      Tensor narrow = x.to(t).requires_grad_(true);
      Tensor wide = narrow.detach().to(kFloat32).requires_grad_(true);
      Tensor y = upsample_bilinear2d(narrow, {3, 9}, false, std::nullopt, std::nullopt, antialias);
      Tensor y32 = upsample_bilinear2d(wide, {3, 9}, false, std::nullopt, std::nullopt, antialias);
      ASSERT_EQ(y.dtype(), t);
      EXPECT_TRUE(equal(y, y32.to(t))) << t;
      Tensor g = linspace(-1, 1, y.numel()).reshape(y.sizes());
      y.backward(g.to(t));
      y32.backward(g.to(t).to(kFloat32));
      ASSERT_EQ(narrow.grad().dtype(), t);
      EXPECT_TRUE(equal(narrow.grad(), wide.grad().to(t))) << t;
    }
    EXPECT_EQ(upsample_nearest2d(x.to(t), {10, 14}).dtype(), t);
  }
}
