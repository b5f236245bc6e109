// PNG round trips (uint8 HWC with 1-4 channels, float CHW with clamping and rounding, strided
// views), to_uint8_hwc, atomic writes and errors; draw_text's box, width, clipping and colors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "io/io_test_util.h"
#include "support/error_of.h"

#include "cohort/io/image.h"
#include "cohort/ops/creation.h"

using namespace cohort;
using namespace cohort::testing;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

namespace {

class Png : public ScratchDir {};

// Deterministic bytes that use the whole range 0..255.
Tensor pattern_u8(int64_t h, int64_t w, int64_t c) {
  std::vector<uint8_t> v(static_cast<size_t>(h * w * c));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>((i * 37 + 11) % 256);
  return tensor(v).reshape({h, w, c});
}

TEST_F(Png, RoundTripsUint8WithOneToFourChannels) {
  for (int64_t c : {1, 2, 3, 4}) {
    Tensor img = pattern_u8(5, 7, c);
    const std::string p = path("u8_" + std::to_string(c) + ".png");
    io::write_png(p, img);
    Tensor back = io::read_png(p);
    EXPECT_TRUE(same_tensor(back, img)) << "C = " << c;
    EXPECT_THAT(others("u8_" + std::to_string(c) + ".png"),
                ::testing::Each(::testing::EndsWith(".png")));  // no temp file left
  }
}

TEST_F(Png, WritesStridedViews) {
  Tensor big = pattern_u8(8, 9, 3);
  Tensor view = big.narrow(0, 2, 4).narrow(1, 1, 5);  // not contiguous
  io::write_png(path("v.png"), view);
  EXPECT_TRUE(same_tensor(io::read_png(path("v.png")), view.contiguous()));
  Tensor chw = pattern_u8(4, 6, 3).permute({2, 0, 1}).to(kFloat32) / 255.0;  // float CHW from a permute
  io::write_png(path("p.png"), chw);
  EXPECT_TRUE(same_tensor(io::read_png(path("p.png")), pattern_u8(4, 6, 3)));
}

TEST_F(Png, FloatChwIsClampedAndRounded) {
  // One row of 6 pixels, grey: below 0, 0, 0.5 (127.5 rounds up), 1/255 - tiny, 1, above 1.
  Tensor grey = tensor({{{-0.5, 0.0, 0.5, 0.0039, 1.0, 1.5}}}, TensorOptions(kFloat64));
  io::write_png(path("g.png"), grey);
  EXPECT_TRUE(same_tensor(io::read_png(path("g.png")),
                          tensor(std::vector<uint8_t>{0, 0, 128, 1, 255, 255}).reshape({1, 6, 1})));
  // RGB float32 [3, 1, 2]: channels become the last dimension.
  Tensor rgb = tensor({{{1.0f, 0.0f}}, {{0.2f, 0.4f}}, {{0.0f, 1.0f}}});
  io::write_png(path("rgb.png"), rgb);
  EXPECT_TRUE(same_tensor(io::read_png(path("rgb.png")),
                          tensor(std::vector<uint8_t>{255, 51, 0, 0, 102, 255}).reshape({1, 2, 3})));
  Tensor rgba = rand({4, 3, 2});
  io::write_png(path("rgba.png"), rgba);
  EXPECT_EQ(io::read_png(path("rgba.png")).sizes(), IntArrayRef({3, 2, 4}));
}

TEST(ToUint8Hwc, RoundsClampsAndTransposes) {
  // [C=2, H=1, W=3] -> [1, 3, 2].
  Tensor chw = tensor({{{0.0, 0.5, 1.2}}, {{-3.0, 0.2, std::nan("")}}});
  Tensor hwc = io::to_uint8_hwc(chw);
  EXPECT_EQ(hwc.dtype(), kUInt8);
  EXPECT_TRUE(hwc.equal(tensor(std::vector<uint8_t>{0, 0, 128, 51, 255, 0}).reshape({1, 3, 2}))) << hwc;
  // Float32 1/255 steps survive exactly.
  Tensor steps = arange(256, TensorOptions(kFloat32)).div(255.0).reshape({1, 16, 16});
  EXPECT_TRUE(io::to_uint8_hwc(steps).equal(arange(256, TensorOptions(kUInt8)).reshape({16, 16, 1})));
  EXPECT_THAT(error_of([] { io::to_uint8_hwc(zeros({4, 4}, TensorOptions(kFloat64))); }),
              HasSubstr("to_uint8_hwc: expected a float32 or float64 image [C, H, W], got float64 [4, 4]"));
}

TEST_F(Png, OverwritesAtomically) {
  io::write_png(path("a.png"), pattern_u8(2, 2, 1));
  io::write_png(path("a.png"), pattern_u8(3, 4, 3));
  EXPECT_TRUE(same_tensor(io::read_png(path("a.png")), pattern_u8(3, 4, 3)));
  EXPECT_THAT(others("a.png"), IsEmpty());
}

TEST_F(Png, ErrorsNameTheProblem) {
  const std::string p = path("e.png");
  EXPECT_THAT(error_of([&] { io::write_png(p, zeros({3, 4}, TensorOptions(kUInt8))); }),
              HasSubstr("write_png: a uint8 image must be [H, W, C] with C = 1, 2, 3 or 4, got [3, 4]"));
  EXPECT_THAT(error_of([&] { io::write_png(p, zeros({3, 8, 8}, TensorOptions(kUInt8))); }),
              HasSubstr("got [3, 8, 8]; hint: this looks like CHW, use permute({1, 2, 0})"));
  EXPECT_THAT(error_of([&] { io::write_png(p, zeros({8, 8, 3})); }),
              HasSubstr("write_png: a floating-point image must be [C, H, W] with C = 1, 3 or 4, got [8, 8, 3]; hint"));
  EXPECT_THAT(error_of([&] { io::write_png(p, zeros({2, 4, 4})); }), HasSubstr("C = 1, 3 or 4, got [2, 4, 4]"));
  EXPECT_THAT(error_of([&] { io::write_png(p, zeros({4, 4, 3}, TensorOptions(kInt64))); }),
              HasSubstr("write_png: expected a uint8 [H, W, C] or float [C, H, W] image, got int64 [4, 4, 3]"));
  EXPECT_THAT(error_of([&] { io::write_png(p, zeros({0, 4, 3}, TensorOptions(kUInt8))); }),
              HasSubstr("write_png: the image is empty, got [0, 4, 3]"));
  EXPECT_THAT(error_of([&] { io::write_png(p, Tensor()); }), HasSubstr("write_png: the image is an undefined tensor"));
  EXPECT_THAT(others(""), IsEmpty());
}

TEST_F(Png, UnwritablePathLeavesNoFile) {
  const std::string p = path("missing_dir/x.png");
  EXPECT_THAT(error_of([&] { io::write_png(p, pattern_u8(2, 2, 3)); }),
              HasSubstr("write_png: cannot create '" + p + ".tmp."));
  EXPECT_FALSE(fs::exists(p));
  // A directory in place of the file: refused before a temp file is made (tests/io/file_test.cpp).
  fs::create_directory(path("d.png"));
  EXPECT_THAT(error_of([&] { io::write_png(path("d.png"), pattern_u8(2, 2, 3)); }),
              HasSubstr("write_png: " + path("d.png").string() + " is a directory, not a regular file"));
  EXPECT_THAT(others("d.png"), IsEmpty());
}

TEST_F(Png, ReadErrorsNameThePath) {
  EXPECT_THAT(error_of([&] { io::read_png(path("none.png")); }), HasSubstr("read_png: " + path("none.png").string()));
  write_bytes(path("bad.png"), "not a png at all");
  EXPECT_THAT(error_of([&] { io::read_png(path("bad.png")); }),
              HasSubstr("read_png: " + path("bad.png").string() + ": not a readable PNG file"));
  io::write_png(path("t.png"), pattern_u8(8, 8, 3));
  std::string bytes = read_bytes(path("t.png"));
  write_bytes(path("t.png"), bytes.substr(0, bytes.size() / 2));  // truncated
  EXPECT_THAT(error_of([&] { io::read_png(path("t.png")); }), HasSubstr("not a readable PNG file"));
}

// The bounding box of the pixels that differ from zero.
struct Box {
  int64_t x0 = INT64_MAX, y0 = INT64_MAX, x1 = -1, y1 = -1;  // inclusive
  int64_t count = 0;
};
Box ink(const Tensor& img) {
  Box b;
  Tensor c = img.contiguous();
  const uint8_t* p = c.data_ptr<uint8_t>();
  const int64_t h = c.size(0), w = c.size(1), ch = c.size(2);
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      for (int64_t k = 0; k < ch; ++k)
        if (p[(y * w + x) * ch + k] != 0) {
          b.x0 = std::min(b.x0, x), b.x1 = std::max(b.x1, x), b.y0 = std::min(b.y0, y), b.y1 = std::max(b.y1, y);
          ++b.count;
        }
  return b;
}

TEST(ImageText, DrawsOnlyInsideItsBox) {
  for (int scale : {1, 2, 3}) {
    Tensor img = zeros({60, 200, 3}, TensorOptions(kUInt8));
    const std::string text = "Hello 42";
    const int64_t x = 7, y = 5;
    io::draw_text(img, x, y, text, {10, 200, 30}, scale);
    const int64_t w = io::text_width(text, scale), h = io::text_height(text, scale);
    EXPECT_EQ(w, 42 * scale);  // stb_easy_font_width("Hello 42") = 42
    EXPECT_EQ(h, 12 * scale);
    const Box b = ink(img);
    ASSERT_GT(b.count, 0) << "scale " << scale;
    EXPECT_EQ(b.x0, x) << "scale " << scale;  // 'H' starts at the left edge
    EXPECT_GE(b.y0, y);
    // The final '2' starts at font pixel 36 and is 4 wide: the box ends with 2 font pixels of spacing.
    EXPECT_EQ(b.x1, x + 40 * scale - 1);
    EXPECT_LT(b.y1, y + h);
    // Every changed pixel has exactly the color.
    const uint8_t* p = img.data_ptr<uint8_t>();
    int64_t colored = 0;
    for (int64_t i = 0; i < img.numel(); i += 3) {
      const bool blank = p[i] == 0 && p[i + 1] == 0 && p[i + 2] == 0;
      colored += p[i] == 10 && p[i + 1] == 200 && p[i + 2] == 30;
      EXPECT_TRUE(blank || (p[i] == 10 && p[i + 1] == 200 && p[i + 2] == 30)) << "pixel " << i / 3;
    }
    EXPECT_EQ(colored * 3, b.count);
  }
  EXPECT_EQ(io::text_width("", 2), 0);
  EXPECT_EQ(io::text_height("", 2), 0);
  EXPECT_EQ(io::text_height("a\nb", 1), 24);
  EXPECT_EQ(io::text_width("ab\nabcd", 1), io::text_width("abcd", 1));
}

TEST(ImageText, ClipsAtTheImageBorders) {
  // Drawing partly outside a small image equals drawing on a large one and cropping.
  Tensor big = zeros({40, 60, 1}, TensorOptions(kUInt8));
  io::draw_text(big, 10, 10, "clip me", {255, 255, 255}, 2);
  for (auto [ox, oy] : {std::pair<int64_t, int64_t>{14, 13}, {30, 20}, {0, 0}}) {
    Tensor small = zeros({12, 16, 1}, TensorOptions(kUInt8));
    io::draw_text(small, 10 - ox, 10 - oy, "clip me", {255, 255, 255}, 2);
    EXPECT_TRUE(same_tensor(small, big.narrow(0, oy, 12).narrow(1, ox, 16).contiguous())) << ox << "," << oy;
  }
  Tensor off = zeros({8, 8, 3}, TensorOptions(kUInt8));
  io::draw_text(off, 100, -50, "far away", {255, 0, 0});
  EXPECT_EQ(ink(off).count, 0);
}

TEST(ImageText, GreyAlphaAndStridedImages) {
  Tensor grey = zeros({14, 10, 2}, TensorOptions(kUInt8));
  io::draw_text(grey, 0, 0, "|", {255, 0, 0});
  const Box b = ink(grey);
  ASSERT_GT(b.count, 0);
  EXPECT_EQ(grey.select(2, 0).max().item<int64_t>(), 76);   // luminance of pure red
  EXPECT_EQ(grey.select(2, 1).max().item<int64_t>(), 255);  // opaque
  // Drawing into a view writes through to its base.
  Tensor base = zeros({20, 30, 3}, TensorOptions(kUInt8));
  Tensor view = base.narrow(1, 10, 20);
  const uint32_t version = base._version();
  io::draw_text(view, 0, 0, "x", {1, 2, 3});
  EXPECT_EQ(ink(base).x0, 10);
  EXPECT_GT(base._version(), version);
  // Unprintable bytes draw as '?', not out of the font's table.
  EXPECT_EQ(io::text_width("\x01\xff", 1), io::text_width("??", 1));
}

TEST(ImageText, Errors) {
  EXPECT_THAT(error_of([] { io::draw_text(zeros({3, 8, 8}), 0, 0, "a", {0, 0, 0}); }),
              HasSubstr("draw_text: expected a uint8 [H, W, C] image with C = 1..4, got float32 [3, 8, 8]"));
  EXPECT_THAT(error_of([] { io::draw_text(zeros({8, 8}, TensorOptions(kUInt8)), 0, 0, "a", {0, 0, 0}); }),
              HasSubstr("got uint8 [8, 8]"));
  EXPECT_THAT(error_of([] { io::draw_text(zeros({8, 8, 3}, TensorOptions(kUInt8)), 0, 0, "a", {0, 0, 0}, 0); }),
              HasSubstr("draw_text: scale must be at least 1, got 0"));
  EXPECT_THAT(error_of([] { io::text_width("a", -1); }), HasSubstr("text_width: scale must be at least 1, got -1"));
}

}  // namespace
