// `cohort train --checkpoint-activations`: the same training losses as without (ResNet by stage,
// char-transformer by layer), recorded in the run's config, refused by the models without it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/activation_checkpointing.h"
#include "run_cohort.h"

namespace {

namespace fs = std::filesystem;
using cohort::testing::fresh_test_dir;
using cohort::testing::run_cohort;
using ::testing::HasSubstr;

std::vector<nlohmann::json> records_of(const fs::path& run) {
  std::vector<nlohmann::json> records;
  std::ifstream in(run / "metrics.jsonl");
  for (std::string line; std::getline(in, line);) records.push_back(nlohmann::json::parse(line));
  return records;
}

// Two steps (16 examples, batches of 8), every step's loss logged.
std::vector<std::string> two_steps(const std::string& model, const fs::path& dir, const fs::path& out) {
  std::vector<std::string> args{"train", "--model", model, "--epochs", "1", "--batch-size", "8", "--limit", "16",
                                "--threads", "1", "--workers", "0", "--log-every", "1", "--no-progress",
                                "--overwrite", "--out", out.string()};
  if (model == "char-transformer") {
    fs::create_directories(dir / "corpus");
    std::ofstream corpus(dir / "corpus" / "lines");
    for (int i = 0; i < 40; ++i) corpus << "the cat sat on the mat.\n";
    args.insert(args.end(), {"--dataset", "text:" + (dir / "corpus").string(), "--seq-len", "16"});
  } else {
    args.insert(args.end(), {"--dataset", "synthetic"});
  }
  return args;
}

TEST(CheckpointActivations, TrainsToTheSameLossesAndIsRecorded) {
  for (const std::string model : {"resnet18", "char-transformer"}) {
    const fs::path dir = fresh_test_dir("checkpoint-activations", model);
    std::vector<std::string> plain = two_steps(model, dir, dir / "plain");
    std::vector<std::string> checkpointed = two_steps(model, dir, dir / "checkpointed");
    checkpointed.push_back("--checkpoint-activations");
    auto [code, err] = run_cohort(plain);
    ASSERT_EQ(code, 0) << err;
    std::tie(code, err) = run_cohort(checkpointed);
    ASSERT_EQ(code, 0) << err;
    const auto a = records_of(dir / "plain"), b = records_of(dir / "checkpointed");
    ASSERT_FALSE(a.empty());
    ASSERT_FALSE(b.empty());
    EXPECT_EQ(a[0]["kind"], "config");
    EXPECT_EQ(a[0]["checkpoint_activations"], false) << a[0].dump();
    EXPECT_EQ(b[0]["checkpoint_activations"], true) << b[0].dump();
    std::vector<double> la, lb;
    for (const auto& r : a)
      if (r["kind"] == "step") la.push_back(r["loss"]);
    for (const auto& r : b)
      if (r["kind"] == "step") lb.push_back(r["loss"]);
    ASSERT_EQ(la.size(), 2u) << model;
    ASSERT_EQ(lb.size(), la.size()) << model;
    for (size_t i = 0; i < la.size(); ++i) EXPECT_EQ(la[i], lb[i]) << model << ": step " << i + 1;
    fs::remove_all(dir);
  }
}

TEST(CheckpointActivations, OtherModelsRefuseTheFlag) {
  const fs::path dir = fresh_test_dir("checkpoint-activations", "refused");
  auto [code, err] = run_cohort({"train", "--model", "lenet", "--dataset", "synthetic", "--checkpoint-activations",
                                 "--no-progress", "--out", (dir / "run").string()});
  EXPECT_EQ(code, 2);
  EXPECT_THAT(err, HasSubstr("--checkpoint-activations"));
  EXPECT_THAT(err, HasSubstr("is not supported by model lenet; the models that support it: resnet18, resnet34, "
                             "resnet50, char-transformer"));
  EXPECT_FALSE(fs::exists(dir / "run" / "metrics.jsonl"));
  const auto& supported = cohort::app::models_with_checkpoint_activations();
  EXPECT_EQ(supported, (std::vector<std::string>{"resnet18", "resnet34", "resnet50", "char-transformer"}));
}

}  // namespace
