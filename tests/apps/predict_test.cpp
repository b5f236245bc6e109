// `cohort predict`: top-k classes of a trained checkpoint for image files (grey or RGB, converted to
// the model's channels, resized to its size) and for CSV rows, as text and JSON; errors name the input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/data_setup.h"
#include "app/predict.h"
#include "cohort/data/transforms.h"
#include "cohort/data/vision_transforms.h"
#include "cohort/io/image.h"
#include "cohort/ops/creation.h"
#include "run_cohort.h"
#include "support/error_of.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using testing::error_of;
using testing::fresh_test_dir;
using testing::run_cohort;
namespace fs = std::filesystem;

class Predict : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fresh_test_dir("predict", "run");
    auto [code, err] = run_cohort({"train", "--dataset", "synthetic", "--model", "lenet", "--limit", "1024",
                                   "--epochs", "2", "--batch-size", "32", "--out", (dir_ / "run").string(),
                                   "--no-progress"});
    ASSERT_EQ(code, 0) << err;
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }
  static std::string predict(app::PredictOptions o) {
    o.checkpoint = (dir_ / "run").string();
    std::ostringstream out;
    app::run_predict(o, out);
    return out.str();
  }
  static fs::path dir_;
};
fs::path Predict::dir_;

TEST_F(Predict, ImagesGetTheirClassesAsTextAndJson) {
  // Test images of the synthetic set, written as a grey PNG and as an RGB one.
  app::SyntheticImages images(1024, 1);
  std::vector<std::string> files;
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < 6; ++i) {
    data::Example<> e = images.get(i);
    const std::string file = (dir_ / ("img" + std::to_string(i) + ".png")).string();
    io::write_png(file, i % 2 ? e.data.expand({28, 28, 3}).contiguous() : e.data);
    files.push_back(file);
    labels.push_back(e.target.item<int64_t>());
  }
  app::PredictOptions o;
  o.inputs = files;
  o.top_k = 2;
  const std::string text = predict(o);
  EXPECT_THAT(text, HasSubstr(files[0] + ": pattern "));
  std::istringstream lines(text);
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    ++count;
    EXPECT_THAT(line, MatchesRegex(".*img[0-9].png: pattern [0-9] [0-9.]+%, pattern [0-9] [0-9.]+%")) << line;
  }
  EXPECT_EQ(count, 6);

  o.json = true;
  const nlohmann::json j = nlohmann::json::parse(predict(o));
  ASSERT_EQ(j.at("predictions").size(), 6u);
  int right = 0;
  for (size_t i = 0; i < 6; ++i) {
    const nlohmann::json& p = j.at("predictions")[i];
    EXPECT_EQ(p.at("input"), files[i]);
    ASSERT_EQ(p.at("top").size(), 2u);
    EXPECT_GE(p.at("top")[0].at("probability").get<double>(), p.at("top")[1].at("probability").get<double>());
    right += p.at("top")[0].at("index").get<int64_t>() == labels[i];
  }
  EXPECT_GE(right, 5);  // two epochs learn the synthetic classes (test accuracy above 95%)
}

TEST_F(Predict, ImagesOfAnotherSizeAreResizedAndBadInputsNamed) {
  // A test image enlarged to 56x84: resized back to the model's 28x28, it keeps its class.
  app::SyntheticImages images(1024, 1);
  data::Example<> e = images.get(0);
  const std::string big = (dir_ / "big.png").string();
  Generator unused;
  io::write_png(big, data::transforms::Resize({84, 56})(e.data, unused));
  app::PredictOptions o;
  o.inputs = {big};
  o.top_k = 1;
  o.json = true;
  EXPECT_EQ(nlohmann::json::parse(predict(o)).at("predictions")[0].at("top")[0].at("index"), e.target.item<int64_t>());

  const std::string bad = (dir_ / "bad.png").string();
  std::ofstream(bad) << "not a png";
  o.inputs = {bad};
  EXPECT_THAT(error_of([&] { predict(o); }), HasSubstr("bad.png"));
  o.inputs = {(dir_ / "missing.png").string()};
  EXPECT_THAT(error_of([&] { predict(o); }), HasSubstr("missing.png"));
  o.inputs = {};
  EXPECT_THAT(error_of([&] { predict(o); }), HasSubstr("cohort predict: no inputs"));
  auto [code, err] = run_cohort({"predict", "--checkpoint", (dir_ / "run").string(), "--top-k", "0", big});
  EXPECT_EQ(code, 2);
  EXPECT_THAT(err, HasSubstr("--top-k must be at least 1, got 0"));
}

}  // namespace
}  // namespace cohort
