// Transforms on small hand-made inputs with the expected outputs written out; random transforms are
// checked against every crop/flip they may legally produce, for reproducibility under a seed, and for
// drawing only from the Generator they are given.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>

#include "io/io_test_util.h"
#include "support/error_of.h"

#include "cohort/data/transforms.h"
#include "cohort/ops/creation.h"

using namespace cohort;
using namespace cohort::testing;
namespace T = cohort::data::transforms;
using ::testing::HasSubstr;

namespace {

Tensor f32(const NestedValues& v) { return tensor(v, TensorOptions(kFloat32)); }

TEST(Transforms, ToTensorScalesHwcBytesIntoChwFloats) {
  Generator gen(1);
  // [H=2, W=2, C=3]: pixel (h, w) holds (r, g, b).
  Tensor hwc = tensor({{{0, 1, 2}, {51, 102, 255}}, {{10, 20, 30}, {128, 64, 32}}}, TensorOptions(kUInt8));
  Tensor got = T::ToTensor()(hwc, gen);
  EXPECT_TRUE(same_tensor(got, f32({{{0 / 255.f, 51 / 255.f}, {10 / 255.f, 128 / 255.f}},
                                    {{1 / 255.f, 102 / 255.f}, {20 / 255.f, 64 / 255.f}},
                                    {{2 / 255.f, 1.f}, {30 / 255.f, 32 / 255.f}}})));
  // A strided view (every other column) reads the same pixels as its contiguous copy.
  Tensor wide = tensor(std::vector<uint8_t>{1, 2, 3, 4, 5, 6, 7, 8}).view({2, 4, 1});
  Tensor view = wide.slice(1, 0, 4, 2);
  EXPECT_TRUE(same_tensor(T::ToTensor()(view, gen), f32({{{1 / 255.f, 3 / 255.f}, {5 / 255.f, 7 / 255.f}}})));
  // Grey [H, W, 1] (MNIST) and [H, W] both become [1, H, W].
  Tensor grey = tensor({{0, 255}, {17, 34}}, TensorOptions(kUInt8));
  Tensor expected = f32({{{0.f, 1.f}, {17 / 255.f, 34 / 255.f}}});
  EXPECT_TRUE(same_tensor(T::ToTensor()(grey, gen), expected));
  EXPECT_TRUE(same_tensor(T::ToTensor()(grey.unsqueeze(2), gen), expected));
}

TEST(Transforms, ToTensorPassesFloatChwThroughAndRejectsOtherInputs) {
  Generator gen(1);
  Tensor chw = zeros({3, 4, 4});
  EXPECT_TRUE(T::ToTensor()(chw, gen).is_same(chw));
  EXPECT_THAT(error_of([&] { T::ToTensor()(zeros({4, 4}), gen); }),
              HasSubstr("ToTensor: a float input must already be CHW [C, H, W], got shape [4, 4]"));
  EXPECT_THAT(error_of([&] { T::ToTensor()(zeros({2, 2, 3}, TensorOptions(kInt64)), gen); }),
              HasSubstr("ToTensor: expected a uint8 image [H, W, C] or a float [C, H, W] tensor, got int64"));
  EXPECT_THAT(error_of([&] { T::ToTensor()(zeros({1, 2, 2, 3}, TensorOptions(kUInt8)), gen); }),
              HasSubstr("got shape [1, 2, 2, 3]"));
}

TEST(Transforms, NormalizeSubtractsAndDividesPerChannel) {
  Generator gen(1);
  Tensor x = f32({{{0.f, 0.5f}}, {{1.f, 0.25f}}});  // [C=2, H=1, W=2]
  Tensor got = T::Normalize({0.5, 0.1}, {0.25, 2.0})(x, gen);
  EXPECT_TRUE(same_tensor(got, f32({{{(0.f - 0.5f) / 0.25f, 0.f}}, {{(1.f - 0.1f) / 2.f, (0.25f - 0.1f) / 2.f}}})));
  EXPECT_TRUE(same_tensor(x, f32({{{0.f, 0.5f}}, {{1.f, 0.25f}}})));  // the input is untouched
  // float64 stays float64; a transposed (non-contiguous) input is read by its strides.
  Tensor d = tensor({{{1.0, 3.0}}}, TensorOptions(kFloat64));
  EXPECT_TRUE(same_tensor(T::Normalize({1.0}, {2.0})(d, gen), tensor({{{0.0, 1.0}}}, TensorOptions(kFloat64))));
  Tensor t = f32({{{1.f, 2.f}, {3.f, 4.f}}}).transpose(1, 2);
  EXPECT_TRUE(same_tensor(T::Normalize({1.0}, {1.0})(t, gen), f32({{{0.f, 2.f}, {1.f, 3.f}}})));
}

// libtorch's Normalize<> (a TensorTransform): input.sub(mean).div(stddev) with float32 [C, 1, 1]
// parameters, broadcasting as libtorch does; the loop's values equal the ops' to the bit.
TEST(Transforms, LibtorchNormalizeBroadcastsAsLibtorchDoes) {
  T::Normalize<> one(0.1307, 0.3081);
  EXPECT_EQ(one.mean.sizes(), (std::vector<int64_t>{1, 1, 1}));
  EXPECT_EQ(one.stddev.dtype(), kFloat32);
  Tensor img = arange(0, 2 * 3 * 4, 1, TensorOptions(kFloat32)).view({2, 3, 4}) / 24.0;
  Tensor expected = img.sub(one.mean).div(one.stddev);
  EXPECT_TRUE(same_tensor(one(img), expected));
  // A batch [N, C, H, W] with one value per channel, and a 2-d input (which broadcasting makes [1, H, W]).
  T::Normalize<> three({0.5, 0.25, 0.125}, {2.0, 4.0, 8.0});
  Tensor batch = arange(0, 2 * 3 * 2 * 2, 1, TensorOptions(kFloat32)).view({2, 3, 2, 2});
  EXPECT_TRUE(same_tensor(three(batch), batch.sub(three.mean).div(three.stddev)));
  EXPECT_EQ(one(zeros({5, 6})).sizes(), (std::vector<int64_t>{1, 5, 6}));
  // uint8 and float64 inputs take libtorch's type promotion.
  EXPECT_EQ(one(zeros({1, 2, 2}, TensorOptions(kUInt8))).dtype(), kFloat32);
  EXPECT_EQ(one(zeros({1, 2, 2}, TensorOptions(kFloat64))).dtype(), kFloat64);
  // As a TensorTransform on an example: the target passes through.
  data::Example<> e = one.apply({img, tensor(int64_t{7})});
  EXPECT_TRUE(same_tensor(e.data, expected));
  EXPECT_EQ(e.target.item<int64_t>(), 7);
}

TEST(Transforms, NormalizeRejectsMismatchedChannelsAndBadArguments) {
  Generator gen(1);
  auto norm = T::Normalize({0.5, 0.5, 0.5}, {0.2, 0.2, 0.2});
  EXPECT_THAT(error_of([&] { norm(zeros({1, 28, 28}), gen); }),
              HasSubstr("Normalize: the input has 1 channels but mean and std have 3 values, got shape [1, 28, 28]"));
  EXPECT_THAT(error_of([&] { norm(zeros({28, 28, 3}, TensorOptions(kUInt8)), gen); }),
              HasSubstr("hint: apply ToTensor() first"));
  EXPECT_THAT(error_of([&] { norm(zeros({3, 28}), gen); }), HasSubstr("got float32 [3, 28]"));
  EXPECT_THAT(error_of([&] { T::Normalize({0.5, 0.5}, {0.5}); }), HasSubstr("got 2 means and 1 stds"));
  EXPECT_THAT(error_of([&] { T::Normalize({}, {}); }), HasSubstr("got 0 means and 0 stds"));
  EXPECT_THAT(error_of([&] { T::Normalize({0.5, 0.5}, {1.0, 0.0}); }), HasSubstr("std[1] is 0"));
}

TEST(Transforms, HorizontalFlipWithProbabilityZeroAndOne) {
  Generator gen(7);
  Tensor x = f32({{{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}}, {{7.f, 8.f, 9.f}, {10.f, 11.f, 12.f}}});  // [2, 2, 3]
  EXPECT_TRUE(T::RandomHorizontalFlip(0.0)(x, gen).is_same(x));
  EXPECT_TRUE(same_tensor(T::RandomHorizontalFlip(1.0)(x, gen),
                          f32({{{3.f, 2.f, 1.f}, {6.f, 5.f, 4.f}}, {{9.f, 8.f, 7.f}, {12.f, 11.f, 10.f}}})));
  // Any dtype and any strides: a uint8 column slice, a float64 image.
  Tensor bytes = tensor({{1, 2, 3, 4}}, TensorOptions(kUInt8)).slice(1, 1, 4);
  EXPECT_TRUE(same_tensor(T::RandomHorizontalFlip(1.0)(bytes, gen), tensor({{4, 3, 2}}, TensorOptions(kUInt8))));
  Tensor d = tensor({{0.5, -1.0}}, TensorOptions(kFloat64));
  EXPECT_TRUE(same_tensor(T::RandomHorizontalFlip(1.0)(d, gen), tensor({{-1.0, 0.5}}, TensorOptions(kFloat64))));
  EXPECT_THAT(error_of([&] { T::RandomHorizontalFlip(1.5); }),
              HasSubstr("RandomHorizontalFlip: p must be a probability in [0, 1], got 1.5"));
  EXPECT_THAT(error_of([&] { T::RandomHorizontalFlip()(zeros({3}), gen); }), HasSubstr("got shape [3]"));
}

TEST(Transforms, HorizontalFlipHalfTheTimeDependsOnlyOnTheSeed) {
  Tensor x = f32({{{1.f, 2.f}}});
  auto flip = T::RandomHorizontalFlip(0.5);
  int flipped = 0;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    Generator a(seed), b(seed);
    Tensor ya = flip(x, a), yb = flip(x, b);
    EXPECT_TRUE(same_tensor(ya, yb)) << seed;
    flipped += ya.equal(f32({{{2.f, 1.f}}}));
  }
  EXPECT_GT(flipped, 150);
  EXPECT_LT(flipped, 250);
}

TEST(Transforms, RandomCropPadsWithZerosThenCrops) {
  Generator gen(3);
  Tensor x = f32({{{1.f, 2.f}, {3.f, 4.f}}, {{5.f, 6.f}, {7.f, 8.f}}});  // [2, 2, 2]
  // A crop as large as the padded image has one position: the padded image itself.
  EXPECT_TRUE(same_tensor(T::RandomCrop(4, 1)(x, gen),
                          f32({{{0, 0, 0, 0}, {0, 1.f, 2.f, 0}, {0, 3.f, 4.f, 0}, {0, 0, 0, 0}},
                               {{0, 0, 0, 0}, {0, 5.f, 6.f, 0}, {0, 7.f, 8.f, 0}, {0, 0, 0, 0}}})));
  // A smaller crop is one of the windows of the padded image, the same in every channel, and over
  // many seeds each of the 3x3 windows occurs.
  Tensor padded = T::RandomCrop(4, 1)(x, gen);
  std::set<std::pair<int64_t, int64_t>> seen;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    Generator g(seed);
    Tensor got = T::RandomCrop(2, 1)(x, g);
    bool matched = false;
    for (int64_t top = 0; top < 3; ++top)
      for (int64_t left = 0; left < 3; ++left)
        if (got.equal(padded.slice(1, top, top + 2).slice(2, left, left + 2))) {
          matched = true;
          seen.insert({top, left});
        }
    EXPECT_TRUE(matched) << "seed " << seed << ": " << got;
  }
  EXPECT_EQ(seen.size(), 9u);
}

TEST(Transforms, RandomCropWithoutPaddingAndEntirelyInThePadding) {
  Generator gen(5);
  // Padding 0, size = image: the image itself (as a new tensor).
  Tensor x = tensor({{{1, 2, 3}, {4, 5, 6}, {7, 8, 9}}}, TensorOptions(kInt64));
  EXPECT_TRUE(same_tensor(T::RandomCrop(3)(x, gen), x));
  // A 1x1 image padded by 2, cropped 2x2: 16 windows, of which 4 hold the pixel and 12 are all padding.
  Tensor one = f32({{{9.f}}});
  int zero_windows = 0;
  for (uint64_t seed = 0; seed < 400; ++seed) {
    Generator g(seed);
    Tensor got = T::RandomCrop(2, 2)(one, g);
    EXPECT_EQ(got.sizes(), (std::vector<int64_t>{1, 2, 2}));
    const float total = got.sum().item<float>();
    EXPECT_TRUE(total == 0.f || total == 9.f) << got;
    zero_windows += total == 0.f;
  }
  EXPECT_GT(zero_windows, 220);  // expect 300 of 400
  EXPECT_LT(zero_windows, 370);
}

TEST(Transforms, RandomCropRejectsTooSmallImagesAndBadArguments) {
  Generator gen(1);
  EXPECT_THAT(error_of([&] { T::RandomCrop(32, 1)(zeros({3, 28, 28}), gen); }),
              HasSubstr("RandomCrop: cannot crop 32x32 from an image of 28x28 padded by 1, got shape [3, 28, 28]"));
  EXPECT_EQ(T::RandomCrop(32, 2)(zeros({3, 28, 28}), gen).sizes(), (std::vector<int64_t>{3, 32, 32}));
  EXPECT_THAT(error_of([&] { T::RandomCrop(2)(zeros({5}), gen); }),
              HasSubstr("RandomCrop: expected an image [..., H, W], got shape [5]"));
  EXPECT_THAT(error_of([&] { T::RandomCrop(0); }), HasSubstr("got size 0 and padding 0"));
  EXPECT_THAT(error_of([&] { T::RandomCrop(4, -1); }), HasSubstr("got size 4 and padding -1"));
}

TEST(Transforms, ComposeAppliesInOrderAndIsReproducible) {
  auto pipeline = T::Compose({T::ToTensor(), T::RandomCrop(28, 4), T::RandomHorizontalFlip(),
                              T::Normalize({0.5}, {0.5})});
  Tensor img = randint(0, 256, {28, 28, 1}, TensorOptions(kUInt8));
  // Step by step with one generator equals the composition with another of the same seed.
  Generator a(42), b(42);
  Tensor manual = T::ToTensor()(img, a);
  manual = T::RandomCrop(28, 4)(manual, a);
  manual = T::RandomHorizontalFlip()(manual, a);
  manual = T::Normalize({0.5}, {0.5})(manual, a);
  EXPECT_TRUE(same_tensor(pipeline(img, b), manual));
  // Different seeds give different crops.
  std::set<std::vector<float>> outcomes;
  for (uint64_t seed = 0; seed < 8; ++seed) {
    Generator g(seed);
    Tensor y = pipeline(img, g);
    outcomes.insert(std::vector<float>(y.data_ptr<float>(), y.data_ptr<float>() + y.numel()));
  }
  EXPECT_GT(outcomes.size(), 4u);
  EXPECT_TRUE(same_tensor(T::Compose({})(img, a), img));
  EXPECT_THAT(error_of([&] { T::Compose({T::ToTensor(), data::Transform()}); }),
              HasSubstr("Compose: transform 1 of 2 is empty"));
}

TEST(Transforms, RandomTransformsDrawOnlyFromTheGivenGenerator) {
  const std::string before = default_generator().get_state();
  Generator gen(9);
  const std::string gen_before = gen.get_state();
  T::RandomCrop(4, 2)(zeros({1, 4, 4}), gen);
  T::RandomHorizontalFlip()(zeros({1, 4, 4}), gen);
  EXPECT_EQ(default_generator().get_state(), before);
  EXPECT_NE(gen.get_state(), gen_before);
}

}  // namespace
