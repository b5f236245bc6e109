// `cohort train --ema DECAY`: the checkpointed average follows the trained weights step by step
// (batch norm's running statistics too), the trainer's evaluation and `cohort eval` (as predict,
// generate and export, through app::restore_weights) use it, a resumed run is bit for bit the one
// never stopped, and bad decays are usage errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apps/run_cohort.h"
#include "apps/same_run.h"
#include "cohort/io/safetensors.h"
#include "cohort/models/model.h"
#include "cohort/ops/pointwise.h"
#include "support/run_metrics.h"

#include "app/data_setup.h"
#include "app/run_checkpoint.h"

namespace fs = std::filesystem;
using cohort::Tensor;
using cohort::testing::run_cohort;

namespace {

std::vector<std::string> flags(const fs::path& out, const std::vector<std::string>& more) {
  std::vector<std::string> f{"train", "--dataset", "synthetic", "--workers", "1", "--threads", "1", "--lr", "0.05",
                             "--no-progress", "--out", out.string()};
  f.insert(f.end(), more.begin(), more.end());
  return f;
}

fs::path dir(const std::string& name) { return cohort::testing::fresh_test_dir("ema_flag", name); }

// Every checkpoint's trained weights folded into an average by hand must give each checkpoint's
// stored average: the first copies, then a += (1 - decay) (w - a).
void expect_average_of_checkpoints(const fs::path& run, double decay, const std::string& must_hold) {
  const auto checkpoints = cohort::app::list_checkpoints(run);
  ASSERT_GE(checkpoints.size(), 3u);
  std::map<std::string, Tensor> average;
  bool held = false;
  for (const fs::path& c : checkpoints) {
    auto tensors = cohort::io::load_safetensors(c);
    for (const auto& item : tensors) {
      const std::string& key = item.key();
      if (key.rfind("model/", 0) != 0 || !item.value().is_floating_point()) continue;
      const std::string name = key.substr(6);
      const Tensor w = item.value().to(cohort::kFloat64);
      average[name] = average.count(name) ? average[name] + (w - average[name]) * (1 - decay) : w;
      const Tensor stored = tensors["ema/" + name];
      ASSERT_TRUE(stored.defined()) << c << ": no ema/" << name;
      EXPECT_TRUE(cohort::allclose(stored.to(cohort::kFloat64), average[name], 1e-5, 1e-6)) << c << ": " << name;
      held = held || name.find(must_hold) != std::string::npos;
    }
  }
  EXPECT_TRUE(held) << "no tensor named *" << must_hold << "* in " << run;
}

TEST(EmaFlag, TheAverageFollowsTheWeightsStepByStep) {
  const fs::path run = dir("lenet");
  auto [code, err] = run_cohort(flags(run, {"--model", "lenet", "--limit", "128", "--batch-size", "32", "--epochs",
                                            "1", "--ema", "0.75", "--checkpoint-every", "1", "--keep-checkpoints", "99"}));
  ASSERT_EQ(code, 0) << err;
  expect_average_of_checkpoints(run, 0.75, "weight");
}

TEST(EmaFlag, BatchNormStatisticsAreAveragedToo) {
  const fs::path run = dir("resnet");
  auto [code, err] = run_cohort(flags(run, {"--model", "resnet18", "--limit", "48", "--batch-size", "16", "--epochs",
                                            "1", "--ema", "0.5", "--checkpoint-every", "1", "--keep-checkpoints", "99"}));
  ASSERT_EQ(code, 0) << err;
  expect_average_of_checkpoints(run, 0.5, "running_mean");
}

TEST(EmaFlag, TheEvaluationAndEvalUseTheAverage) {
  const fs::path run = dir("evaluated");
  auto [code, err] = run_cohort(flags(run, {"--model", "lenet", "--limit", "256", "--batch-size", "32", "--epochs",
                                            "2", "--ema", "0.9"}));
  ASSERT_EQ(code, 0) << err;
  double trained_loss = -1;
  for (const auto& r : cohort::testing::metrics_of(run))
    if (r["kind"] == "epoch") trained_loss = r["test_loss"];
  const fs::path json = run / "eval-again.json";
  auto [eval_code, eval_err] = run_cohort({"eval", "--checkpoint", run.string(), "--threads", "1", "--json",
                                           json.string()});
  ASSERT_EQ(eval_code, 0) << eval_err;
  EXPECT_NEAR(nlohmann::json::parse(cohort::testing::text_of(json))["loss"].get<double>(), trained_loss, 1e-6);

  // restore_weights, which predict, generate and export call, loads the average, not the weights.
  const cohort::app::Checkpoint c = cohort::app::read_checkpoint(run, false);
  auto model = cohort::app::create_model("lenet", *c.data);
  cohort::app::restore_weights(c, *model);
  const auto stored = cohort::io::load_safetensors(c.path);
  const Tensor fc = model->state_dict()["fc1.weight"];
  EXPECT_TRUE(fc.equal(stored["ema/fc1.weight"]));
  EXPECT_FALSE(fc.equal(stored["model/fc1.weight"]));
}

TEST(EmaFlag, AResumedRunIsTheRunThatWasNotStopped) {
  const std::vector<std::string> more{"--model", "lenet", "--limit", "256", "--batch-size", "32", "--ema", "0.9",
                                      "--epochs", "2"};
  const fs::path whole = dir("whole"), split = dir("split");
  ASSERT_EQ(run_cohort(flags(whole, more)).first, 0);
  std::vector<std::string> first = flags(split, more);
  first.back() = "1";  // --epochs 1
  ASSERT_EQ(run_cohort(first).first, 0);
  auto [code, err] = run_cohort({"train", "--resume", split.string(), "--epochs", "2", "--threads", "1", "--no-progress"});
  ASSERT_EQ(code, 0) << err;
  cohort::testing::expect_identical_checkpoints(whole, split);
  EXPECT_TRUE(cohort::io::load_safetensors(cohort::app::list_checkpoints(whole).back()).contains("ema/fc1.weight"));
}

TEST(EmaFlag, BadDecaysAreUsageErrors) {
  const fs::path d = dir("errors");
  for (const char* bad : {"1", "-0.5", "nan"})
    cohort::testing::expect_train_usage_error(d, {"--dataset", "synthetic", "--ema", bad},
                                              "cohort train: --ema must be a decay in [0, 1)");
}

}  // namespace
