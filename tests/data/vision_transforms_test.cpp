// Resize, CenterCrop, resized_crop, the ColorJitter adjustments and Normalize against torchvision's tensor
// functions (tests/fixtures/vision.json, generate_vision.py) on a uint8 image (within +-1 per byte) and the
// same image as float32 / 255; the random transforms by their deterministic cores, their draws'
// properties, and reproducibility from the generator.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cohort/data/transforms.h"
#include "cohort/ops/creation.h"
#include "support/error_of.h"
#include "support/pytorch_fixture.h"

using namespace cohort;
namespace T = cohort::data::transforms;
using json = nlohmann::json;
using ::testing::HasSubstr;
using cohort::testing::error_of;

namespace {

const json& fixture() { return cohort::testing::load_fixture("vision.json"); }

// The fixture's uint8 [3, H, W] image as cohort's uint8 [H, W, 3], and as float32 [3, H, W] / 255.
Tensor image_hwc() { return cohort::testing::decode_tensor(fixture().at("image")).permute({1, 2, 0}).contiguous(); }
Tensor image_float() { return cohort::testing::decode_tensor(fixture().at("image")).to(kFloat32) / 255.0; }

// got: uint8 [H, W, C]; want: torchvision's uint8 [C, H, W]. Largest byte difference, -1 if shapes differ.
int byte_diff(const Tensor& got, const json& want_entry) {
  Tensor want = cohort::testing::decode_tensor(want_entry).permute({1, 2, 0}).contiguous();
  if (got.sizes() != want.sizes()) return -1;
  Tensor a = got.contiguous();
  int worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    worst = std::max(worst, std::abs(int{a.data_ptr<uint8_t>()[i]} - int{want.data_ptr<uint8_t>()[i]}));
  return worst;
}

void expect_matches(const std::string& name, const std::function<Tensor(const Tensor&)>& fn) {
  SCOPED_TRACE(name);
  const json& c = fixture().at("transforms").at(name);
  Tensor got = fn(image_hwc());
  EXPECT_EQ(got.dtype(), kUInt8);
  const int d = byte_diff(got, c.at("uint8"));
  EXPECT_TRUE(d >= 0 && d <= 1) << name << " uint8: got " << got.sizes() << ", max byte difference " << d;
  if (c.contains("float"))
    EXPECT_TRUE(cohort::testing::matches_pytorch(name + " float", fn(image_float()), c.at("float"), 2e-6));
}

Generator gen(1);

TEST(VisionTransforms, ResizeMatchesTorchvisionAntialias) {
  expect_matches("resize_shorter_10", [](const Tensor& x) { return T::Resize(10)(x, gen); });
  expect_matches("resize_shorter_20", [](const Tensor& x) { return T::Resize(20)(x, gen); });
  expect_matches("resize_9x14", [](const Tensor& x) { return T::Resize({9, 14})(x, gen); });
  expect_matches("resize_5x40", [](const Tensor& x) { return T::Resize({5, 40})(x, gen); });
}

TEST(VisionTransforms, CenterCropMatchesTorchvisionWithPadding) {
  expect_matches("center_crop_8", [](const Tensor& x) { return T::CenterCrop(8)(x, gen); });
  expect_matches("center_crop_7x10", [](const Tensor& x) { return T::CenterCrop({7, 10})(x, gen); });
  expect_matches("center_crop_pad_15x20", [](const Tensor& x) { return T::CenterCrop({15, 20})(x, gen); });
}

TEST(VisionTransforms, ResizedCropMatchesTorchvision) {
  expect_matches("resized_crop", [](const Tensor& x) { return T::detail::resized_crop(x, 3, 4, 8, 10, 5, 5); });
  expect_matches("resized_crop_up", [](const Tensor& x) { return T::detail::resized_crop(x, 1, 2, 5, 7, 11, 9); });
}

TEST(VisionTransforms, ColorAdjustmentsMatchTorchvision) {
  for (double f : {0.0, 0.6, 1.4}) {
    std::ostringstream s;
    s << f;
    const std::string suffix = s.str() == "0" ? "0.0" : s.str();
    expect_matches("brightness_" + suffix, [f](const Tensor& x) { return T::detail::adjust_brightness(x, f); });
    expect_matches("contrast_" + suffix, [f](const Tensor& x) { return T::detail::adjust_contrast(x, f); });
    expect_matches("saturation_" + suffix, [f](const Tensor& x) { return T::detail::adjust_saturation(x, f); });
  }
  for (const auto& [name, f] : std::vector<std::pair<std::string, double>>{
           {"hue_-0.4", -0.4}, {"hue_-0.1", -0.1}, {"hue_0.0", 0.0}, {"hue_0.25", 0.25}, {"hue_0.5", 0.5}})
    expect_matches(name, [f = f](const Tensor& x) { return T::detail::adjust_hue(x, f); });
  expect_matches("color_jitter",
                 [](const Tensor& x) { return T::detail::color_jitter(x, {2, 0, 3, 1}, {1.3, 0.7, 1.2, -0.05}); });
}

TEST(VisionTransforms, NormalizeMatchesTorchvision) {
  const json& c = fixture().at("transforms").at("normalize");
  Tensor got = T::Normalize<>({0.485, 0.456, 0.406}, {0.229, 0.224, 0.225})(image_float(), gen);
  EXPECT_TRUE(cohort::testing::matches_pytorch("normalize", got, c.at("float"), 1e-6));
}

TEST(VisionTransforms, RandomResizedCropBoxesFollowTheirRanges) {
  Generator g(7);
  int fallback = 0;
  for (int i = 0; i < 500; ++i) {
    const auto [top, left, h, w] = T::detail::random_resized_crop_box(40, 60, {0.08, 1.0}, {3.0 / 4, 4.0 / 3}, g);
    ASSERT_TRUE(top >= 0 && left >= 0 && h >= 1 && w >= 1 && top + h <= 40 && left + w <= 60)
        << top << " " << left << " " << h << " " << w;
    const double area = static_cast<double>(h * w) / (40 * 60);
    EXPECT_GE(area, 0.05);
    if (h == 40 && w == 53) ++fallback;
  }
  EXPECT_LT(fallback, 50);
  // An image too narrow for any try falls back to a central crop clamped to the ratio.
  Generator g2(3);
  const auto box = T::detail::random_resized_crop_box(100, 10, {0.9, 1.0}, {1.0, 1.0}, g2);
  EXPECT_EQ(box, (std::array<int64_t, 4>{45, 0, 10, 10}));
}

TEST(VisionTransforms, RandomOnesDependOnlyOnTheGenerator) {
  auto t = T::Compose({T::RandomResizedCrop(8), T::RandomHorizontalFlip(), T::ColorJitter(0.4, 0.4, 0.4, 0.1)});
  Tensor x = image_hwc();
  Generator a(42), b(42), c(43);
  Tensor ya = t(x, a), yb = t(x, b), yc = t(x, c);
  EXPECT_EQ(ya.sizes(), (Shape{8, 8, 3}));
  EXPECT_TRUE(ya.equal(yb));
  EXPECT_FALSE(ya.equal(yc));
  // Float CHW in, float CHW out.
  Generator d(42);
  EXPECT_EQ(t(image_float(), d).sizes(), (Shape{3, 8, 8}));
}

TEST(VisionTransforms, FlipReversesWidthOfHwcImages) {
  Tensor x = image_hwc();
  Generator g(0);
  Tensor y = T::RandomHorizontalFlip(1.0)(x, g);
  for (int64_t col : {0, 5, 14})
    EXPECT_TRUE(y.select(1, col).equal(x.select(1, 14 - col))) << "column " << col;
}

TEST(VisionTransforms, ErrorsNameTheTransform) {
  EXPECT_THAT(error_of([] { T::Resize({1, 2, 3}); }), HasSubstr("Resize: size must be one value or {height, width}"));
  EXPECT_THAT(error_of([] { T::CenterCrop(0); }), HasSubstr("CenterCrop: sizes must be positive"));
  EXPECT_THAT(error_of([] { T::ColorJitter(0, 0, 0, 0.7); }), HasSubstr("ColorJitter: brightness"));
  EXPECT_THAT(error_of([] { T::Resize(4)(zeros({2, 2, 2, 3}, TensorOptions(kUInt8)), gen); }),
              HasSubstr("Resize: expected a uint8 image [H, W, C] or [H, W], got shape [2, 2, 2, 3]"));
  EXPECT_THAT(error_of([] { T::detail::adjust_hue(image_hwc(), 0.6); }), HasSubstr("adjust_hue: the factor"));
}

}  // namespace
