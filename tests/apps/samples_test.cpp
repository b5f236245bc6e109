// write_samples_png: the picture's size follows the documented layout, images are enlarged by nearest
// neighbour, captions are green for right and red for wrong predictions; errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "io/io_test_util.h"
#include "support/error_of.h"

#include "cohort/io/image.h"
#include "cohort/ops/creation.h"
#include "cohort/data/dataset.h"

#include "app/samples.h"

using namespace cohort;
using namespace cohort::testing;
using ::testing::HasSubstr;

namespace {

class Samples : public ScratchDir {};

// A dataset sorted by class, as an image folder is: 40 samples of class 0, then 40 of 1, 40 of 2.
class SortedByClass : public data::IndexedDataset {
 public:
  int64_t size() const override { return 120; }
  data::Example<> get(int64_t i) const override { return {zeros({1}), tensor(i / 40)}; }
};

TEST(SamplesSpread, EachClassInTurn) {
  const SortedByClass sorted;
  EXPECT_EQ(app::spread_across_classes(sorted, 7), (std::vector<int64_t>{0, 40, 80, 1, 41, 81, 2}));
  // Only what was scanned is picked from: the first 50 samples hold classes 0 and 1.
  EXPECT_EQ(app::spread_across_classes(sorted, 4, 50), (std::vector<int64_t>{0, 40, 1, 41}));
  // Fewer samples than asked for: all of them, once each.
  EXPECT_EQ(app::spread_across_classes(sorted, 500, 3), (std::vector<int64_t>{0, 1, 2}));
}

// Counts pixels of exactly this color inside rows [y0, y1) and columns [x0, x1).
int64_t count_color(const Tensor& img, int64_t y0, int64_t y1, int64_t x0, int64_t x1, std::array<uint8_t, 3> rgb) {
  int64_t n = 0;
  const uint8_t* p = img.data_ptr<uint8_t>();
  const int64_t w = img.size(1);
  for (int64_t y = y0; y < y1; ++y)
    for (int64_t x = x0; x < x1; ++x) {
      const uint8_t* q = p + (y * w + x) * 3;
      n += q[0] == rgb[0] && q[1] == rgb[1] && q[2] == rgb[2];
    }
  return n;
}

TEST_F(Samples, MnistSizedGridWithCaptions) {
  // Ten 28x28 grey images: image i is i/10 everywhere except a white top-left pixel.
  Tensor images = arange(10, TensorOptions(kFloat32)).div(10.0).reshape({10, 1, 1, 1}).expand({10, 1, 28, 28}).clone();
  for (int64_t i = 0; i < 10; ++i) images[i][0][0][0].fill_(1.0);
  const std::vector<std::string> digits = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
  std::vector<int64_t> truth = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, predicted = truth;
  predicted[1] = 7;  // one mistake, in cell 1
  app::write_samples_png(path("samples.png").string(), images, truth, predicted, digits);

  Tensor png = io::read_png(path("samples.png").string());
  // Enlarged x3 (84 px); cell 84 + 12 wide, 84 + 16 + 48 tall; 8 columns, 2 rows.
  ASSERT_EQ(png.sizes(), IntArrayRef({2 * 148, 8 * 96, 3}));
  const uint8_t* p = png.data_ptr<uint8_t>();
  auto at = [&](int64_t y, int64_t x) { return p[(y * png.size(1) + x) * 3]; };
  // Cell 9 (row 1, column 1): the image at (148 + 6, 96 + 6), its white pixel a 3x3 square.
  EXPECT_EQ(at(154, 102), 255);
  EXPECT_EQ(at(156, 104), 255);
  EXPECT_EQ(at(157, 105), 230);  // round(0.9 * 255)
  EXPECT_EQ(at(154 + 83, 102 + 83), 230);
  EXPECT_EQ(at(0, 0), 255);  // white margin
  // Captions sit below the images: cell 0 has green and no red, cell 1 red and no green.
  const int64_t caption_top = 6 + 84, caption_bottom = 148;
  EXPECT_GT(count_color(png, caption_top, caption_bottom, 0, 96, {22, 140, 40}), 0);
  EXPECT_EQ(count_color(png, caption_top, caption_bottom, 0, 96, {214, 39, 40}), 0);
  EXPECT_GT(count_color(png, caption_top, caption_bottom, 96, 192, {214, 39, 40}), 0);
  EXPECT_EQ(count_color(png, caption_top, caption_bottom, 96, 192, {22, 140, 40}), 0);
  EXPECT_GT(count_color(png, caption_top, caption_bottom, 96, 192, {90, 96, 108}), 0);  // the grey truth
  EXPECT_EQ(count_color(png, 0, caption_top, 0, png.size(1), {214, 39, 40}), 0);  // no text on images
}

TEST_F(Samples, CellsWidenForLongNamesAndColorImages) {
  const std::vector<std::string> names = {"T-shirt/top", "Trouser", "a very long class name indeed"};
  Tensor images = rand({3, 3, 32, 32});
  app::write_samples_png(path("s.png").string(), images, {0, 1, 2}, {0, 2, 2}, names);
  Tensor png = io::read_png(path("s.png").string());
  // The long name is wider than 160 px at scale 2, so labels drop to scale 1.
  const int64_t widest = io::text_width(names[2], 1);
  ASSERT_GT(widest, 96);
  EXPECT_EQ(png.sizes(), IntArrayRef({96 + 16 + 24, 3 * (widest + 12), 3}));
  // Numbers when there are no names.
  app::write_samples_png(path("n.png").string(), images.narrow(0, 0, 1), {12}, {3}, {});
  EXPECT_EQ(io::read_png(path("n.png").string()).sizes(), IntArrayRef({96 + 16 + 48, 96 + 12, 3}));
}

TEST_F(Samples, Errors) {
  const std::string p = path("e.png").string();
  Tensor images = rand({2, 1, 8, 8});
  EXPECT_THAT(error_of([&] { app::write_samples_png(p, images, {0}, {0, 1}, {}); }),
              HasSubstr("write_samples_png: expected one true and one predicted label per image (2), got 1 and 2"));
  EXPECT_THAT(error_of([&] { app::write_samples_png(p, images, {0, 3}, {0, 1}, {"a", "b", "c"}); }),
              HasSubstr("write_samples_png: label 3 is not a class index in [0, 3)"));
  EXPECT_THAT(error_of([&] { app::write_samples_png(p, rand({2, 8, 8}), {0, 1}, {0, 1}, {}); }),
              HasSubstr("write_samples_png: expected float images [N, C, H, W] with C = 1 or 3, got float32 [2, 8, 8]"));
  EXPECT_THAT(error_of([&] { app::write_samples_png(p, rand({0, 3, 8, 8}), {}, {}, {}); }),
              HasSubstr("write_samples_png: no images to draw"));
  EXPECT_FALSE(fs::exists(p));
}

}  // namespace
