// Evaluation results printed and written as JSON: the confusion matrix up to
// app::kMaxConfusionMatrixClasses classes, and above it per-class recall and precision with the most
// frequent confusions, so that what eval prints and writes grows linearly with the class count.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/evaluate.h"
#include "app/json_text.h"

namespace cohort::app {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// `classes` classes, two samples of each: class c is predicted right once and once as class
// (c + 1) % classes; one more sample of class 0 predicted as class 1 makes (0 -> 1) the top pair.
EvalResult result_of(int64_t classes) {
  EvalResult r;
  r.true_counts.assign(static_cast<size_t>(classes), 0);
  r.predicted_counts = r.correct_counts = r.true_counts;
  auto add = [&](int64_t truth, int64_t predicted) {
    ++r.true_counts[truth];
    ++r.predicted_counts[predicted];
    if (truth == predicted) ++r.correct_counts[truth];
    else ++r.mistakes[{truth, predicted}];
    ++r.count;
  };
  for (int64_t c = 0; c < classes; ++c) {
    add(c, c);
    add(c, (c + 1) % classes);
  }
  add(0, 1);
  r.accuracy = static_cast<double>(classes) / static_cast<double>(r.count);
  return r;
}

std::vector<std::string> names_of(int64_t classes) {
  std::vector<std::string> names;
  for (int64_t c = 0; c < classes; ++c) names.push_back("id" + std::to_string(c));
  return names;
}

TEST(Evaluate, FewClassesKeepTheConfusionMatrix) {
  const EvalResult r = result_of(3);
  const nlohmann::json j = to_json(r, names_of(3));
  EXPECT_EQ(j.at("confusion"), nlohmann::json::parse("[[1,2,0],[0,1,1],[1,0,1]]"));
  EXPECT_EQ(j.at("per_class").at(0).at("count"), 3);
  EXPECT_DOUBLE_EQ(j.at("per_class").at(0).at("accuracy").get<double>(), 1.0 / 3);
  EXPECT_DOUBLE_EQ(j.at("per_class").at(1).at("precision").get<double>(), 1.0 / 3);  // 3 predicted as id1, 1 right
  EXPECT_EQ(j.at("top_confusions").at(0), nlohmann::json::parse(R"({"true":"id0","predicted":"id1","count":2})"));
  std::ostringstream out;
  print_eval(out, r, names_of(3));
  EXPECT_THAT(out.str(), HasSubstr("Confusion matrix (rows: true class, columns: predicted)"));
  EXPECT_THAT(out.str(), HasSubstr("Accuracy for class: id1          is  50.0 %"));
}

// Class names come from folder names and CSV values: eval prints them escaped, in the matrix's
// layout and in the many-class tables alike.
TEST(Evaluate, ClassNamesReachTheTerminalEscaped) {
  for (int64_t classes : {3, 150}) {
    std::vector<std::string> names = names_of(classes);
    names[0] = "red\x1b[2J";
    names[1] = "bell\a";
    std::ostringstream out;
    print_eval(out, result_of(classes), names);
    EXPECT_THAT(out.str(), Not(HasSubstr("\x1b"))) << classes << " classes";
    EXPECT_THAT(out.str(), Not(HasSubstr("\a"))) << classes << " classes";
    EXPECT_THAT(out.str(), HasSubstr("red\\x1b[2J")) << classes << " classes";
  }
}

TEST(Evaluate, ManyClassesGiveLinearOutputWithTopConfusionsInsteadOfTheMatrix) {
  const int64_t classes = 10000;  // an ID column chosen as the target
  const EvalResult r = result_of(classes);
  const nlohmann::json j = to_json(r, names_of(classes));
  EXPECT_FALSE(j.contains("confusion"));
  ASSERT_EQ(j.at("per_class").size(), static_cast<size_t>(classes));
  EXPECT_TRUE(j.at("per_class").at(5).contains("precision"));
  ASSERT_EQ(j.at("top_confusions").size(), kTopConfusions);
  EXPECT_EQ(j.at("top_confusions").at(0), nlohmann::json::parse(R"({"true":"id0","predicted":"id1","count":2})"));
  // Then count 1 each, in class order: id1 -> id2, id2 -> id3, ...
  EXPECT_EQ(j.at("top_confusions").at(1).at("true"), "id1");
  EXPECT_EQ(j.at("top_confusions").at(1).at("predicted"), "id2");
  // eval.json: a few hundred bytes per class, where the matrix alone took 10^8 numbers.
  EXPECT_LT(json_text(j, 2).size(), 200u * classes);

  std::ostringstream out;
  print_eval(out, r, names_of(classes));
  const std::string text = out.str();
  EXPECT_THAT(text, Not(HasSubstr("Confusion matrix")));
  EXPECT_THAT(text, HasSubstr("10000 classes: recall and precision per class, then the 20 most frequent confusions"));
  EXPECT_THAT(text, HasSubstr("Most frequent confusions (true class -> predicted: samples)\n  id0 -> id1: 2\n"));
  EXPECT_LT(text.size(), 100u * classes);
  EXPECT_LT(std::count(text.begin(), text.end(), '\n'), classes + 40);
}

TEST(Evaluate, ConfusionMatrixAndTopConfusionsAgree) {
  const EvalResult r = result_of(5);
  const auto m = r.confusion_matrix();
  for (const Confusion& c : r.top_confusions(100))
    EXPECT_EQ(m[static_cast<size_t>(c.truth)][static_cast<size_t>(c.predicted)], c.count);
  EXPECT_EQ(r.top_confusions(100).size(), r.mistakes.size());
}

}  // namespace
}  // namespace cohort::app
