// PixelShuffle, PixelUnshuffle and Upsample through nn: the functional forms, reprs (torch 1.13's),
// Upsample against F::interpolate, and errors. pixel_shuffle's values and gradients are in the op
// table (tests/ops/op_table_vision_test.cpp); interpolation's against PyTorch in
// tests/ops/interpolate_test.cpp.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "cohort/core/generator.h"
#include "cohort/nn/vision.h"
#include "cohort/ops/creation.h"
#include "support/error_of.h"

namespace cohort {
namespace {

namespace F = nn::functional;
using ::testing::HasSubstr;
using testing::error_of;

std::string repr(const nn::Module& m) {
  std::ostringstream os;
  m.pretty_print(os);
  return os.str();
}

TEST(VisionLayers, ReprLikePyTorch) {
  EXPECT_EQ(repr(*nn::PixelShuffle(3)), "PixelShuffle(upscale_factor=3)");
  EXPECT_EQ(repr(*nn::PixelUnshuffle(nn::PixelUnshuffleOptions(2))), "PixelUnshuffle(downscale_factor=2)");
  EXPECT_EQ(repr(*nn::Upsample(nn::UpsampleOptions().scale_factor(std::vector<double>{2}))),
            "Upsample(scale_factor=2.0, mode=nearest)");
  EXPECT_EQ(repr(*nn::Upsample(nn::UpsampleOptions().size(std::vector<int64_t>{4, 5}).mode(kBilinear).align_corners(true))),
            "Upsample(size=(4, 5), mode=bilinear)");
  EXPECT_EQ(repr(*nn::Upsample(nn::UpsampleOptions().scale_factor(std::vector<double>{2, 1.5}).mode(kBilinear))),
            "Upsample(scale_factor=(2.0, 1.5), mode=bilinear)");
}

TEST(VisionLayers, PixelShuffleRoundTripsAndModulesForward) {
  manual_seed(21);
  Tensor x = randn({2, 12, 3, 5});
  nn::PixelShuffle shuffle(2);
  Tensor y = shuffle(x);
  EXPECT_EQ(y.sizes(), IntArrayRef({2, 3, 6, 10}));
  EXPECT_TRUE(y.is_contiguous());
  EXPECT_TRUE(nn::PixelUnshuffle(2)(y).equal(x));
  EXPECT_TRUE(F::pixel_unshuffle(F::pixel_shuffle(x, 2), F::PixelUnshuffleFuncOptions(2)).equal(x));
  // Unbatched and extra leading dims keep their shape.
  EXPECT_EQ(F::pixel_shuffle(randn({9, 2, 2}), 3).sizes(), IntArrayRef({1, 6, 6}));
  EXPECT_EQ(F::pixel_unshuffle(randn({2, 3, 1, 4, 6}), 2).sizes(), IntArrayRef({2, 3, 4, 2, 3}));
  EXPECT_EQ(shuffle->name(), "PixelShuffle");
}

TEST(VisionLayers, UpsampleIsInterpolateWithItsScaleFactor) {
  manual_seed(22);
  Tensor x = randn({1, 2, 3, 5});
  nn::Upsample nearest(nn::UpsampleOptions().scale_factor(std::vector<double>{2, 1.5}));
  EXPECT_TRUE(nearest(x).equal(F::interpolate(
      x, F::InterpolateFuncOptions().scale_factor(std::vector<double>{2, 1.5}).recompute_scale_factor(false))));
  EXPECT_EQ(nearest(x).sizes(), IntArrayRef({1, 2, 6, 7}));
  nn::Upsample bilinear(nn::UpsampleOptions().size(std::vector<int64_t>{7, 4}).mode(kBilinear).align_corners(true));
  EXPECT_TRUE(bilinear(x).equal(F::interpolate(
      x, F::InterpolateFuncOptions().size(std::vector<int64_t>{7, 4}).mode(kBilinear).align_corners(true))));
  EXPECT_EQ(bilinear->name(), "Upsample");
}

TEST(VisionLayers, ErrorsNameTheOpAndTheShapes) {
  EXPECT_THAT(error_of([] { F::pixel_shuffle(randn({2, 6, 3, 3}), 2); }),
              HasSubstr("pixel_shuffle: expected the channels (dim -3) of input [2, 6, 3, 3] to be divisible by "
                        "upscale_factor^2 = 4, got 6"));
  EXPECT_THAT(error_of([] { F::pixel_shuffle(randn({4, 3}), 2); }),
              HasSubstr("pixel_shuffle: expected an input of at least 3 dims [*, C, H, W], got shape [4, 3]"));
  EXPECT_THAT(error_of([] { F::pixel_unshuffle(randn({1, 2, 4, 5}), 2); }),
              HasSubstr("pixel_unshuffle: expected the height and width (dims -2, -1) of input [1, 2, 4, 5] to be "
                        "divisible by downscale_factor = 2, got 4 and 5"));
  EXPECT_THAT(error_of([] { F::pixel_unshuffle(randn({1, 2, 4, 4}), 0); }),
              HasSubstr("pixel_unshuffle: downscale_factor must be positive, got 0"));
  EXPECT_THAT(error_of([] { nn::Upsample(nn::UpsampleOptions())(randn({1, 1, 2, 2})); }),
              HasSubstr("interpolate: give exactly one of size and scale_factor, got neither"));
}

}  // namespace
}  // namespace cohort
