// make_grid's layout, normalization and channel expansion. The expected grids are what
// torchvision.utils.make_grid 0.14 returns for the same inputs (checked with python3-torchvision; the
// corners and values below were printed by it).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/error_of.h"

#include "cohort/data/image_grid.h"
#include "cohort/ops/creation.h"

using namespace cohort;
using namespace cohort::testing;
using ::testing::HasSubstr;

namespace {

// Image k, channel c, pixel (y, x) holds k + 1 + 0.1 c + 0.01 (y W + x): every value names its source.
Tensor labelled_batch(int64_t b, int64_t c, int64_t h, int64_t w) {
  Tensor t = empty({b, c, h, w}, TensorOptions(kFloat64));
  double* p = t.data_ptr<double>();
  for (int64_t k = 0; k < b; ++k)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < h * w; ++i) *p++ = k + 1 + 0.1 * ch + 0.01 * i;
  return t;
}

TEST(ImageGrid, LayoutOfFiveImagesInRowsOfTwo) {
  const int64_t H = 2, W = 3;
  Tensor grid = data::make_grid(labelled_batch(5, 3, H, W), /*nrow=*/2, /*padding=*/1, false, /*pad_value=*/-1);
  ASSERT_EQ(grid.sizes(), IntArrayRef({3, 10, 9}));  // 3 rows x (2 + 1) + 1, 2 cols x (3 + 1) + 1
  EXPECT_EQ(grid.dtype(), kFloat64);
  // Top-left corners (row, col) of images 0..4, from torchvision; the sixth cell stays padding.
  const std::pair<int64_t, int64_t> corner[5] = {{1, 1}, {1, 5}, {4, 1}, {4, 5}, {7, 1}};
  std::vector<std::vector<bool>> covered(10, std::vector<bool>(9, false));
  for (int64_t k = 0; k < 5; ++k)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t x = 0; x < W; ++x) {
          const auto [r0, c0] = corner[k];
          EXPECT_DOUBLE_EQ(grid[c][r0 + y][c0 + x].item<double>(), k + 1 + 0.1 * c + 0.01 * (y * W + x))
              << "image " << k << " channel " << c << " pixel " << y << "," << x;
          covered[r0 + y][c0 + x] = true;
        }
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t i = 0; i < 10; ++i)
      for (int64_t j = 0; j < 9; ++j)
        if (!covered[i][j]) EXPECT_EQ(grid[c][i][j].item<double>(), -1) << "padding at " << c << "," << i << "," << j;
}

TEST(ImageGrid, DefaultsPutUpToEightInARow) {
  Tensor grid = data::make_grid(labelled_batch(5, 3, 2, 3).to(kFloat32));
  EXPECT_EQ(grid.sizes(), IntArrayRef({3, 6, 27}));  // one row of 5, padding 2
  EXPECT_EQ(grid.dtype(), kFloat32);
  EXPECT_FLOAT_EQ(grid[2][2][2 + 4 * 5].item<float>(), 5.2f);  // image 4's first pixel, channel 2
  EXPECT_EQ(grid[0][0][0].item<float>(), 0.0f);
  EXPECT_EQ(data::make_grid(labelled_batch(16, 3, 2, 2), 4, 0).sizes(), IntArrayRef({3, 8, 8}));
}

TEST(ImageGrid, GreyIsRepeatedIntoThreeChannels) {
  Tensor grid = data::make_grid(labelled_batch(3, 1, 2, 2), 3, 1);
  ASSERT_EQ(grid.sizes(), IntArrayRef({3, 4, 10}));
  EXPECT_TRUE(grid[0].equal(grid[1]));
  EXPECT_TRUE(grid[0].equal(grid[2]));
  EXPECT_DOUBLE_EQ(grid[2][2][8].item<double>(), 3.03);  // image 2, pixel (1, 1)
}

TEST(ImageGrid, NormalizeUsesTheBatchMinAndMax) {
  // Two 1x2 grey images {-1, 3} and {1, 0} in a column; torchvision gives 0, 1 / 0.5, 0.25.
  Tensor batch = tensor({{{{-1.0f, 3.0f}}}, {{{1.0f, 0.0f}}}});
  Tensor grid = data::make_grid(batch, 1, 1, /*normalize=*/true, /*pad_value=*/7);
  Tensor expected_plane = tensor({{7.f, 7.f, 7.f, 7.f},
                                  {7.f, 0.f, 1.f, 7.f},
                                  {7.f, 7.f, 7.f, 7.f},
                                  {7.f, .5f, .25f, 7.f},
                                  {7.f, 7.f, 7.f, 7.f}});
  ASSERT_EQ(grid.sizes(), IntArrayRef({3, 5, 4}));
  for (int64_t c = 0; c < 3; ++c) EXPECT_TRUE(grid[c].allclose(expected_plane)) << grid;
  // A constant batch divides by 1e-5, not by zero; the input is not modified.
  Tensor flat = full({2, 1, 2, 2}, 0.25);
  EXPECT_TRUE(data::make_grid(flat, 2, 0, true).equal(zeros({3, 2, 4})));
  EXPECT_TRUE(flat.equal(full({2, 1, 2, 2}, 0.25)));
}

TEST(ImageGrid, OneImageIsReturnedWithoutPadding) {
  // torchvision's special case: make_grid of a single image is that image.
  Tensor grid = data::make_grid(labelled_batch(1, 1, 2, 3), 8, 3);
  ASSERT_EQ(grid.sizes(), IntArrayRef({3, 2, 3}));
  EXPECT_DOUBLE_EQ(grid[1][1][2].item<double>(), 1.05);
}

TEST(ImageGrid, DetachesFromAutograd) {
  Tensor batch = rand({2, 3, 2, 2}).requires_grad_();
  Tensor grid = data::make_grid(batch, 2, 1, true);
  EXPECT_FALSE(grid.requires_grad());
}

TEST(ImageGrid, Errors) {
  EXPECT_THAT(error_of([] { data::make_grid(zeros({3, 4, 4})); }),
              HasSubstr("make_grid: expected a batch [B, C, H, W], got [3, 4, 4]; hint: a single image [C, H, W] needs unsqueeze(0)"));
  EXPECT_THAT(error_of([] { data::make_grid(zeros({2, 2, 4, 4})); }),
              HasSubstr("make_grid: expected 1 or 3 channels, got [2, 2, 4, 4]"));
  EXPECT_THAT(error_of([] { data::make_grid(zeros({2, 3, 4, 4}, TensorOptions(kUInt8))); }),
              HasSubstr("make_grid: expected a float32 or float64 batch, got uint8"));
  EXPECT_THAT(error_of([] { data::make_grid(zeros({2, 3, 4, 4}), 0); }), HasSubstr("make_grid: nrow must be at least 1, got 0"));
  EXPECT_THAT(error_of([] { data::make_grid(zeros({2, 3, 4, 4}), 2, -1); }),
              HasSubstr("make_grid: padding must be non-negative, got -1"));
  EXPECT_THAT(error_of([] { data::make_grid(zeros({0, 3, 4, 4})); }), HasSubstr("make_grid: the batch is empty"));
}

}  // namespace
