// `cohort train --dataset csv:FILE --target COLUMN`: a table learned by the MLP (rows standardised,
// split by --val-split and --seed), evaluated by `cohort eval`, new rows classified by
// `cohort predict`; the flags' errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "app/predict.h"
#include "ring_table.h"
#include "run_cohort.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;
using testing::fresh_test_dir;
using testing::run_cohort;
using testing::text_of;
namespace fs = std::filesystem;

TEST(TableDataset, TheMlpLearnsACsvTableAndEvalReadsItBack) {
  const fs::path dir = fresh_test_dir("table", "learns");
  const fs::path csv = cohort::testing::write_ring_table(dir / "data", 1200);
  const fs::path out = dir / "run";
  auto [code, err] = run_cohort({"train", "--model", "mlp", "--dataset", "csv:" + csv.string(), "--target", "label",
                                 "--val-split", "0.25", "--epochs", "25", "--optimizer", "adam", "--lr", "0.003",
                                 "--batch-size", "32", "--out", out.string(), "--no-progress"});
  ASSERT_EQ(code, 0) << err;
  EXPECT_THAT(err, HasSubstr("(900 train, 300 test rows from " + csv.string() + ")"));
  const nlohmann::json eval = nlohmann::json::parse(text_of(out / "eval.json"));
  EXPECT_GT(eval.at("accuracy").get<double>(), 0.9);  // chance: the larger class, about 0.6
  EXPECT_EQ(eval.at("classes"), (std::vector<std::string>{"inside", "outside"}));
  EXPECT_FALSE(fs::exists(out / "samples.png"));  // rows are not pictures

  // eval rebuilds the same split and standardisation from the stored configuration.
  auto [eval_code, eval_err] = run_cohort({"eval", "--checkpoint", out.string(), "--json", (dir / "again.json").string()});
  ASSERT_EQ(eval_code, 0) << eval_err;
  EXPECT_EQ(nlohmann::json::parse(text_of(dir / "again.json")).at("accuracy"), eval.at("accuracy"));

  // predict takes new rows by column name (the target column may be absent, the order may differ).
  const fs::path rows = dir / "new.csv";
  std::ofstream(rows) << "noise,b,a\n0.3,50.0,0\n0.1,50.9,900\n";
  app::PredictOptions o;
  o.checkpoint = out.string();
  o.inputs = {rows.string()};
  o.top_k = 1;
  std::ostringstream printed;
  app::run_predict(o, printed);
  EXPECT_THAT(printed.str(), ::testing::MatchesRegex(".*new.csv:2: inside [0-9.]+%\n.*new.csv:3: outside [0-9.]+%\n"));

  // The checkpoint carries the columns and their standardisation: without the training table (a model
  // copied to another machine) predict gives the same answer.
  fs::rename(csv, dir / "elsewhere.csv");
  std::ostringstream without_data;
  app::run_predict(o, without_data);
  EXPECT_EQ(without_data.str(), printed.str());
  fs::remove_all(dir);
}

TEST(TableDataset, AnIdentifierTargetWarnsAndEvalStaysLinear) {
  // A target with a value per row (an ID column): a warning at training; with more classes than the
  // confusion matrix is drawn for, eval prints, writes and reports per-class tables and top confusions.
  const fs::path dir = fresh_test_dir("table", "identifier");
  fs::create_directories(dir);
  {
    std::ofstream out(dir / "people.csv");
    out << "id,x,y\n";
    for (int i = 0; i < 240; ++i) out << "p" << i << "," << i % 7 << "," << i % 11 << "\n";
  }
  const fs::path run = dir / "run";
  auto [code, err] = run_cohort({"train", "--model", "mlp", "--dataset", "csv:" + (dir / "people.csv").string(),
                                 "--target", "id", "--val-split", "0.5", "--epochs", "1", "--workers", "0",
                                 "--threads", "1", "--no-progress", "--out", run.string()});
  ASSERT_EQ(code, 0) << err;
  EXPECT_THAT(err, HasSubstr("cohort train: warning: the target column 'id' has 240 distinct values in 240 rows: more "
                             "than half the rows have a class of their own, so it is probably an identifier"));
  const nlohmann::json eval = nlohmann::json::parse(text_of(run / "eval.json"));
  EXPECT_FALSE(eval.contains("confusion"));
  EXPECT_EQ(eval.at("per_class").size(), 240u);
  EXPECT_FALSE(eval.at("top_confusions").empty());
  EXPECT_THAT(text_of(run / "report.html"), HasSubstr("<h3>Most frequent confusions</h3>"));

  ::testing::internal::CaptureStdout();
  auto [eval_code, eval_err] = run_cohort({"eval", "--checkpoint", run.string()});
  const std::string printed = ::testing::internal::GetCapturedStdout();
  ASSERT_EQ(eval_code, 0) << eval_err;
  EXPECT_THAT(printed, HasSubstr("240 classes: recall and precision per class, then the 20 most frequent confusions"));
  EXPECT_THAT(printed, ::testing::Not(HasSubstr("Confusion matrix")));
  fs::remove_all(dir);
}

TEST(TableDataset, FlagsThatDoNotFitATableAreUsageErrors) {
  const fs::path dir = fresh_test_dir("table", "flags");
  const std::string csv = "csv:" + cohort::testing::write_ring_table(dir, 20).string();
  auto expect_usage = [&](std::vector<std::string> args, const std::string& message) {
    testing::expect_train_usage_error(dir, std::move(args), message);
  };
  expect_usage({"--model", "mlp", "--dataset", csv}, "--target is needed with --dataset csv:FILE");
  expect_usage({"--model", "lenet", "--dataset", csv, "--target", "label"},
               "--model 'lenet' needs images; a table (--dataset csv:FILE) trains with --model mlp");
  expect_usage({"--model", "mlp", "--dataset", csv, "--target", "label", "--val-split", "1"},
               "--val-split must be in [0, 1), got 1");
  expect_usage({"--dataset", "synthetic", "--target", "label"}, "--target is only for --dataset csv:FILE");
  expect_usage({"--model", "mlp", "--dataset", "csv:"}, "--dataset csv: must name a path");

  {
    std::ofstream(dir / "dup.csv") << "f1,f1,label\n1,2,a\n3,4,b\n5,6,a\n7,8,b\n";
    auto [dup_code, dup_err] = run_cohort({"train", "--model", "mlp", "--dataset", "csv:" + (dir / "dup.csv").string(),
                                           "--target", "label", "--out", (dir / "run-dup").string(), "--no-progress"});
    EXPECT_EQ(dup_code, 1);
    EXPECT_THAT(dup_err, HasSubstr("dup.csv: the column name 'f1' appears more than once, at columns 1 and 2 "
                                   "(counting from 1, as a spreadsheet does)"));
    EXPECT_FALSE(fs::exists(dir / "run-dup" / "checkpoints"));
  }

  auto [code, err] = run_cohort({"train", "--model", "mlp", "--dataset", csv, "--target", "colour", "--out",
                                 (dir / "run2").string(), "--no-progress"});
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("rings.csv: no column named 'colour'; the header has a, label, b, noise"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace cohort
