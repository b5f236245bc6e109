// Unfold and Fold through nn: F::unfold / F::fold against PyTorch's values and gradients
// (tests/fixtures/vision_ops.json from tests/fixtures/generate_vision_ops.py), reprs (torch 1.13's)
// and errors. im2col / col2im's gradients to second order are in the op table
// (tests/ops/op_table_vision_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cohort/autograd/engine.h"
#include "cohort/core/generator.h"
#include "cohort/nn/fold.h"
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

ExpandingArray<2> arr(const json& c, const char* key, int64_t fallback) {
  if (!c.contains(key)) return ExpandingArray<2>(fallback);
  const auto v = c.at(key).get<std::vector<int64_t>>();
  return v.size() == 1 ? ExpandingArray<2>(v[0]) : ExpandingArray<2>(v);
}

Tensor run_case(const json& c, const Tensor& x) {
  if (c.at("op") == "unfold")
    return F::unfold(x, F::UnfoldFuncOptions(arr(c, "kernel_size", 0))
                            .dilation(arr(c, "dilation", 1))
                            .padding(arr(c, "padding", 0))
                            .stride(arr(c, "stride", 1)));
  return F::fold(x, F::FoldFuncOptions(arr(c, "output_size", 0), arr(c, "kernel_size", 0))
                        .dilation(arr(c, "dilation", 1))
                        .padding(arr(c, "padding", 0))
                        .stride(arr(c, "stride", 1)));
}

TEST(FoldFixture, MatchesPyTorchValuesAndGradients) {
  const json& fixture = testing::load_fixture("vision_ops.json");
  int checked = 0;
  for (const json& c : fixture.at("fold")) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    Tensor x = testing::decode_tensor(c.at("input")).requires_grad_();
    Tensor y = run_case(c, x);
    EXPECT_TRUE(testing::matches_pytorch(name + " output", y, c.at("output")));
    auto grads = autograd::grad({(y * testing::decode_tensor(c.at("upstream"))).sum()}, {x});
    EXPECT_TRUE(testing::matches_pytorch(name + " grad input", grads[0], c.at("grad_input")));
    EXPECT_TRUE(testing::matches_pytorch(name + " float32 output", run_case(c, x.detach().to(kFloat32)),
                                         c.at("output"), 1e-5));
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

std::string repr(const nn::Module& m) {
  std::ostringstream os;
  m.pretty_print(os);
  return os.str();
}

TEST(FoldModule, ReprLikePyTorchAndRoundTrip) {
  // Each expected string printed by torch 1.13's modules with the same arguments.
  EXPECT_EQ(repr(*nn::Unfold(nn::UnfoldOptions({2, 3}))), "Unfold(kernel_size=(2, 3), dilation=1, padding=0, stride=1)");
  EXPECT_EQ(repr(*nn::Unfold(nn::UnfoldOptions(2).dilation(2).padding(1).stride({1, 2}))),
            "Unfold(kernel_size=2, dilation=2, padding=1, stride=(1, 2))");
  // Equal entries print as one number, as when given to PyTorch as an int.
  EXPECT_EQ(repr(*nn::Fold(nn::FoldOptions({4, 5}, 2))),
            "Fold(output_size=(4, 5), kernel_size=2, dilation=1, padding=0, stride=1)");
  EXPECT_EQ(repr(*nn::Fold(nn::FoldOptions(6, 3).stride(2).padding(1))),
            "Fold(output_size=6, kernel_size=3, dilation=1, padding=1, stride=2)");
  // Non-overlapping blocks: fold undoes unfold.
  manual_seed(23);
  Tensor x = randn({2, 3, 4, 6});
  nn::Unfold unfold(nn::UnfoldOptions(2).stride(2));
  nn::Fold fold(nn::FoldOptions({4, 6}, 2).stride(2));
  Tensor cols = unfold(x);
  EXPECT_EQ(cols.sizes(), IntArrayRef({2, 12, 6}));
  EXPECT_TRUE(fold(cols).equal(x));
  EXPECT_EQ(fold->name(), "Fold");
}

TEST(FoldErrors, NameTheOpAndTheShapes) {
  EXPECT_THAT(error_of([] { F::unfold(randn({2, 3}), F::UnfoldFuncOptions(2)); }),
              HasSubstr("im2col: expected a 3-d (unbatched) or 4-d (batched) input [N, C, H, W], got input of shape [2, 3]"));
  EXPECT_THAT(error_of([] { F::unfold(randn({1, 1, 3, 3}), F::UnfoldFuncOptions(4)); }),
              HasSubstr("im2col: kernel_size=(4, 4) with dilation=(1, 1) spans 4, more than the padded image (3 = 3 + 0 "
                        "padding in spatial dim 0 of image size [3, 3])"));
  EXPECT_THAT(error_of([] { F::unfold(randn({1, 1, 3, 3}), F::UnfoldFuncOptions(2).stride(0)); }),
              HasSubstr("im2col: stride must be positive, got stride=(0, 0)"));
  EXPECT_THAT(error_of([] { F::fold(randn({1, 10, 9}), F::FoldFuncOptions(4, 2)); }),
              HasSubstr("col2im: expected the channels of input [1, 10, 9] to be divisible by the product of "
                        "kernel_size=(2, 2) (4), got 10"));
  EXPECT_THAT(error_of([] { F::fold(randn({1, 12, 8}), F::FoldFuncOptions(4, 2)); }),
              HasSubstr("col2im: expected input [1, 12, 8] to have 3 * 3 = 9 blocks (output_size=(4, 4), "
                        "kernel_size=(2, 2), dilation=(1, 1), padding=(0, 0), stride=(1, 1)), got 8"));
}

}  // namespace
}  // namespace cohort
