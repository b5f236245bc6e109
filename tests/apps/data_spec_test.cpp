// DataSpec, the data description checkpoints carry: its JSON round trip (names that are not UTF-8
// included), the errors of a damaged one, and the inference transform it implies.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "app/data_spec.h"
#include "cohort/data/transforms.h"
#include "cohort/ops/creation.h"
#include "support/error_of.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;
using testing::error_of;

app::DataSpec table_spec() {
  app::DataSpec s;
  s.kind = app::DataKind::kTable;
  s.classes = {"low", std::string("h\xe9gh", 4)};  // Latin-1: not UTF-8
  s.channels = 2, s.image_size = 1;
  s.mean = {0.5, -1}, s.std = {2, 0.25};
  s.features = {"x", "y"};
  return s;
}

TEST(DataSpec, RoundTripsThroughJsonTextWithNamesThatAreNotUtf8) {
  const app::DataSpec s = table_spec();
  const std::string text = app::to_json(s).dump();  // would throw for raw Latin-1
  const app::DataSpec back = app::data_spec_from_json(nlohmann::json::parse(text), "test: ");
  EXPECT_EQ(back.kind, s.kind);
  EXPECT_EQ(back.classes, s.classes);
  EXPECT_EQ(back.channels, 2);
  EXPECT_EQ(back.image_size, 1);
  EXPECT_EQ(back.mean, s.mean);
  EXPECT_EQ(back.std, s.std);
  EXPECT_EQ(back.features, s.features);
  EXPECT_THAT(text, HasSubstr("{\"bytes\":[104,233,103,104]}"));

  app::DataSpec text_spec;  // a vocabulary of raw bytes, one of them half of a UTF-8 character
  text_spec.kind = app::DataKind::kText, text_spec.classes = {"a", "\n", std::string(1, '\xc3')}, text_spec.image_size = 64;
  const app::DataSpec text_back = app::data_spec_from_json(nlohmann::json::parse(app::to_json(text_spec).dump()), "");
  EXPECT_EQ(text_back.classes, text_spec.classes);
}

TEST(DataSpec, DamagedDescriptionsAreErrorsNamingTheField) {
  auto damaged = [](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json j = app::to_json(table_spec());
    edit(j);
    return error_of([&] { app::data_spec_from_json(j, "ckpt: "); });
  };
  EXPECT_THAT(damaged([](auto& j) { j["kind"] = "video"; }), HasSubstr("ckpt: unknown data kind 'video'"));
  EXPECT_THAT(damaged([](auto& j) { j["classes"] = nlohmann::json::array(); }), HasSubstr("ckpt: 'classes' is empty"));
  EXPECT_THAT(damaged([](auto& j) { j["channels"] = 0; }), HasSubstr("ckpt: 'channels' must be a positive integer"));
  EXPECT_THAT(damaged([](auto& j) { j["std"] = {1.0, 0.0}; }), HasSubstr("ckpt: 'std' values must be positive"));
  EXPECT_THAT(damaged([](auto& j) { j["mean"] = {1.0}; }), HasSubstr("ckpt: 'mean' and 'std' must hold 2 values"));
  EXPECT_THAT(damaged([](auto& j) { j["features"] = {"x"}; }), HasSubstr("must name its 2 columns"));
  EXPECT_THAT(damaged([](auto& j) { j["classes"][0] = {{"bytes", {300}}}; }), HasSubstr("bytes must be 0 to 255"));
  EXPECT_THAT(damaged([](auto& j) { j.erase("image_size"); }), HasSubstr("ckpt: "));
}

TEST(DataSpec, InferenceTransformNormalisesResizesAndStandardises) {
  Generator gen;
  app::DataSpec images;
  images.classes = {"a", "b"}, images.channels = 1, images.image_size = 4, images.mean = {0.5}, images.std = {0.25};
  const Tensor white = full({4, 4, 1}, 255, kUInt8);
  const Tensor x = app::inference_transform(images)(white, gen);
  EXPECT_EQ(x.sizes(), (std::vector<int64_t>{1, 4, 4}));
  EXPECT_FLOAT_EQ(x[0][0][0].item<float>(), 2.f);  // (1 - 0.5) / 0.25
  const Tensor big = app::inference_transform(images)(full({8, 6, 1}, 255, kUInt8), gen);
  EXPECT_EQ(big.sizes(), (std::vector<int64_t>{1, 4, 4}));  // resized to the model's size

  const Tensor row = app::inference_transform(table_spec())(tensor(std::vector<float>{1.5f, 0.f}), gen);
  EXPECT_EQ(row.sizes(), (std::vector<int64_t>{2, 1, 1}));
  EXPECT_FLOAT_EQ(row[0][0][0].item<float>(), 0.5f);  // (1.5 - 0.5) / 2
  EXPECT_FLOAT_EQ(row[1][0][0].item<float>(), 4.f);   // (0 + 1) / 0.25

  EXPECT_EQ(app::example_input(table_spec(), 3).sizes(), (std::vector<int64_t>{3, 2, 1, 1}));
  app::DataSpec text;
  text.kind = app::DataKind::kText, text.classes = {"a"}, text.image_size = 16;
  EXPECT_EQ(app::example_input(text, 2).dtype(), kInt64);
}

}  // namespace
}  // namespace cohort
