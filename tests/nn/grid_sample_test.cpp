// F::affine_grid and F::grid_sample against PyTorch's values and gradients (w.r.t. theta, input and
// grid; tests/fixtures/vision_ops.json from tests/fixtures/generate_vision_ops.py), a spatial
// transformer's identity and shift by hand, and errors. Second-order gradients are in the op table
// (tests/ops/op_table_vision_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cohort/autograd/engine.h"
#include "cohort/core/generator.h"
#include "cohort/nn/functional/vision.h"
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

TEST(GridSampleFixture, AffineGridMatchesPyTorch) {
  const json& fixture = testing::load_fixture("vision_ops.json");
  int checked = 0;
  for (const json& c : fixture.at("affine_grid")) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    Tensor theta = testing::decode_tensor(c.at("theta")).requires_grad_();
    const auto size = c.at("size").get<std::vector<int64_t>>();
    Tensor grid = F::affine_grid(theta, size, c.at("align_corners").get<bool>());
    EXPECT_TRUE(testing::matches_pytorch(name + " grid", grid, c.at("output")));
    auto grads = autograd::grad({(grid * testing::decode_tensor(c.at("upstream"))).sum()}, {theta});
    EXPECT_TRUE(testing::matches_pytorch(name + " grad theta", grads[0], c.at("grad_theta")));
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

TEST(GridSampleFixture, GridSampleMatchesPyTorch) {
  const json& fixture = testing::load_fixture("vision_ops.json");
  int checked = 0;
  for (const json& c : fixture.at("grid_sample")) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    const std::string padding = c.at("padding_mode");
    auto options = F::GridSampleFuncOptions()
                       .mode(c.at("mode") == "bilinear" ? kBilinear : kNearest)
                       .padding_mode(padding == "zeros" ? kZeros : padding == "border" ? kBorder : kReflection)
                       .align_corners(c.at("align_corners").get<bool>());
    for (DType dtype : {kFloat64, kFloat32}) {
      const double tol = dtype == kFloat64 ? 1e-10 : 1e-5;
      Tensor x = testing::decode_tensor(c.at("input")).to(dtype).requires_grad_();
      Tensor grid = testing::decode_tensor(c.at("grid")).to(dtype).requires_grad_();
      Tensor y = F::grid_sample(x, grid, options);
      EXPECT_TRUE(testing::matches_pytorch(name + " output", y, c.at("output"), tol));
      auto grads = autograd::grad({(y * testing::decode_tensor(c.at("upstream")).to(dtype)).sum()}, {x, grid});
      EXPECT_TRUE(testing::matches_pytorch(name + " grad input", grads[0], c.at("grad_input"), tol));
      EXPECT_TRUE(testing::matches_pytorch(name + " grad grid", grads[1], c.at("grad_grid"), tol * 10));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 12);
}

TEST(GridSample, IdentityAndShiftByHand) {
  manual_seed(24);
  Tensor x = randn({2, 3, 5, 6}, kFloat64);
  Tensor identity = tensor(std::vector<double>{1, 0, 0, 0, 1, 0}, kFloat64).view({1, 2, 3}).expand({2, 2, 3});
  for (bool align : {false, true}) {
    Tensor grid = F::affine_grid(identity, {2, 3, 5, 6}, align);
    EXPECT_LT(testing::max_abs_diff(F::grid_sample(x, grid, F::GridSampleFuncOptions().align_corners(align)), x), 1e-12);
    EXPECT_TRUE(F::grid_sample(x, grid, F::GridSampleFuncOptions().mode(kNearest).align_corners(align)).equal(x));
  }
  // A shift of one pixel to the right with align_corners (2 / (W - 1) in normalised units): column
  // w reads column w + 1, and the last column reads outside: zeros, or the border column.
  Tensor shift = tensor(std::vector<double>{1, 0, 2.0 / 5, 0, 1, 0}, kFloat64).view({1, 2, 3}).expand({2, 2, 3});
  Tensor grid = F::affine_grid(shift, {2, 3, 5, 6}, true);
  Tensor zeros_pad = F::grid_sample(x, grid, F::GridSampleFuncOptions().align_corners(true));
  EXPECT_LT(testing::max_abs_diff(zeros_pad.narrow(3, 0, 5), x.narrow(3, 1, 5)), 1e-12);
  EXPECT_LT(zeros_pad.narrow(3, 5, 1).abs().max().item<double>(), 1e-12);
  Tensor border = F::grid_sample(x, grid, F::GridSampleFuncOptions().padding_mode(kBorder).align_corners(true));
  EXPECT_LT(testing::max_abs_diff(border.narrow(3, 5, 1), x.narrow(3, 5, 1)), 1e-12);
}

TEST(GridSample, ErrorsNameTheOpAndTheShapes) {
  Tensor x = randn({2, 3, 4, 4});
  EXPECT_THAT(error_of([&] { F::grid_sample(x, randn({2, 3, 3, 3})); }),
              HasSubstr("grid_sample: expected a grid [N, H_out, W_out, 2], got grid of shape [2, 3, 3, 3]"));
  EXPECT_THAT(error_of([&] { F::grid_sample(x, randn({1, 3, 3, 2})); }),
              HasSubstr("grid_sample: expected grid and input to have the same batch size, got grid [1, 3, 3, 2] and "
                        "input [2, 3, 4, 4]"));
  EXPECT_THAT(error_of([&] { F::grid_sample(randn({1, 1, 2, 2, 2}), randn({1, 2, 2, 2, 3})); }),
              HasSubstr("grid_sample: expected a 4-d input [N, C, H, W], got input of shape [1, 1, 2, 2, 2]"));
  EXPECT_THAT(error_of([&] { F::grid_sample(x, randn({2, 3, 3, 2}, kFloat64)); }),
              HasSubstr("grid_sample: expected floating-point input and grid of one dtype, got float32 and float64"));
  EXPECT_THAT(error_of([&] { F::grid_sample(x.to(kBFloat16), randn({2, 3, 3, 2}).to(kBFloat16)); }),
              HasSubstr("grid_sample: bfloat16 inputs are not supported"));
  EXPECT_THAT(error_of([] { F::affine_grid(randn({2, 2, 3}), {2, 3, 4}); }),
              HasSubstr("affine_grid: expected a 4-d size [N, C, H, W] (2-d transform) or a 5-d size"));
  EXPECT_THAT(error_of([] { F::affine_grid(randn({2, 3, 4}), {2, 3, 4, 4}); }),
              HasSubstr("affine_grid: expected theta of shape [2, 2, 3] for size [2, 3, 4, 4], got theta of shape "
                        "[2, 3, 4]"));
  EXPECT_THAT(error_of([] { F::affine_grid(randn({1, 2, 3}), {1, 3, 0, 4}); }),
              HasSubstr("affine_grid: expected positive sizes, got size [1, 3, 0, 4]"));
}

}  // namespace
}  // namespace cohort
