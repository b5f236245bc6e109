// `cohort train --init-from FILE --freeze PATTERN`: weights from a file PyTorch wrote (or a cohort
// run), frozen ones that do not move while the others train, kept by --resume.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <sstream>

#include "apps/run_cohort.h"
#include "cohort/io/safetensors.h"
#include "cohort/io/torch_file.h"
#include "cohort/models/model.h"
#include "support/error_of.h"

#include "app/config.h"
#include "app/fine_tune.h"
#include "app/run_checkpoint.h"
#include "support/paths.h"

namespace fs = std::filesystem;
using ::testing::HasSubstr;

namespace cohort::testing {
namespace {

fs::path pytorch_lenet() { return fs::path(cohort::testing::fixtures_dir()) / "torch" / "pytorch_lenet.pt"; }

std::vector<std::string> train_flags(const fs::path& out, const std::vector<std::string>& more) {
  std::vector<std::string> flags = {"train", "--dataset", "synthetic", "--limit", "64", "--batch-size", "32",
                                    "--epochs", "1", "--workers", "0", "--threads", "1", "--no-progress",
                                    "--out", out.string()};
  flags.insert(flags.end(), more.begin(), more.end());
  return flags;
}

// The model's tensors in the newest checkpoint of a run.
nn::StateDict weights_of(const fs::path& run) {
  const auto all = io::load_safetensors(app::read_checkpoint(run, /*talk=*/false).path);
  nn::StateDict out;
  for (const auto& item : all)
    if (item.key().rfind("model/", 0) == 0) out.insert(item.key().substr(6), item.value());
  return out;
}

TEST(FineTune, FreezePatternsAreGlobsOverDottedNames) {
  EXPECT_TRUE(app::matches_freeze("conv1.weight", "conv*"));
  EXPECT_TRUE(app::matches_freeze("layer1.0.conv1.weight", "layer1.*"));
  EXPECT_FALSE(app::matches_freeze("layer10.0.conv1.weight", "layer1.*"));
  EXPECT_TRUE(app::matches_freeze("fc3.bias", "conv*,*.bias"));
  EXPECT_TRUE(app::matches_freeze("fc3.bias", "fc?.bias"));
  EXPECT_FALSE(app::matches_freeze("fc3.bias", "fc"));  // the whole name must match
  EXPECT_FALSE(app::matches_freeze("fc3.bias", ""));
}

TEST(FineTune, FrozenWeightsKeepThePytorchValuesAndTheOthersTrain) {
  const fs::path run = fresh_test_dir("finetune", "pytorch");
  auto [code, err] = run_cohort(train_flags(run, {"--init-from", pytorch_lenet().string(), "--freeze", "conv*"}));
  ASSERT_EQ(code, 0) << err;
  EXPECT_THAT(err, HasSubstr("cohort: initial weights from " + pytorch_lenet().string() +
                             "; 4 of 10 parameter tensors frozen (--freeze 'conv*')"));
  const auto file = io::load_pytorch_state_dict(pytorch_lenet());
  const auto trained = weights_of(run);
  for (const char* frozen : {"conv1.weight", "conv1.bias", "conv2.weight", "conv2.bias"})
    EXPECT_TRUE(trained[frozen].equal(file[frozen])) << frozen;
  for (const char* trainable : {"fc1.weight", "fc2.bias", "fc3.weight"}) {
    EXPECT_FALSE(trained[trainable].equal(file[trainable])) << trainable;
    // Trained from PyTorch's values, not from a fresh initialisation: a step moves them only a little.
    EXPECT_LT((trained[trainable] - file[trainable]).abs().max().item<double>(), 0.1) << trainable;
  }
  // The run's config records both; resuming keeps them, and the frozen weights stay.
  const std::string config_line = text_of(run / "metrics.jsonl").substr(0, text_of(run / "metrics.jsonl").find('\n'));
  EXPECT_THAT(config_line, HasSubstr("\"freeze\":\"conv*\""));
  EXPECT_THAT(config_line, HasSubstr("\"init_from\":\"" + pytorch_lenet().string() + "\""));
  std::tie(code, err) = run_cohort({"train", "--resume", run.string(), "--epochs", "2", "--no-progress"});
  ASSERT_EQ(code, 0) << err;
  const auto resumed = weights_of(run);
  EXPECT_TRUE(resumed["conv2.weight"].equal(file["conv2.weight"]));
  EXPECT_FALSE(resumed["fc1.weight"].equal(trained["fc1.weight"]));
  // The recipe cannot change on resume.
  std::tie(code, err) = run_cohort({"train", "--resume", run.string(), "--epochs", "3", "--freeze", "fc*"});
  EXPECT_EQ(code, 2);
  EXPECT_THAT(err, HasSubstr("--freeze"));
  fs::remove_all(run.parent_path());
}

TEST(FineTune, InitFromACohortRun) {
  const fs::path first = fresh_test_dir("finetune", "first"), second = fresh_test_dir("finetune", "second");
  auto [code, err] = run_cohort(train_flags(first, {}));
  ASSERT_EQ(code, 0) << err;
  std::tie(code, err) = run_cohort(train_flags(second, {"--init-from", first.string(), "--freeze", "*", "--lr", "0.1"}));
  EXPECT_EQ(code, 2);
  EXPECT_THAT(err, HasSubstr("freezes every parameter"));
  std::tie(code, err) = run_cohort(train_flags(second, {"--init-from", first.string(), "--freeze", "fc1.*,conv*"}));
  ASSERT_EQ(code, 0) << err;
  const auto a = weights_of(first), b = weights_of(second);
  EXPECT_TRUE(b["fc1.weight"].equal(a["fc1.weight"]));
  EXPECT_TRUE(b["conv1.weight"].equal(a["conv1.weight"]));
  EXPECT_FALSE(b["fc3.weight"].equal(a["fc3.weight"]));

  // Another model's run: the error names the model the checkpoint trained.
  const fs::path third = fresh_test_dir("finetune", "third");
  std::tie(code, err) = run_cohort(train_flags(third, {"--model", "mlp", "--init-from", first.string()}));
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("the file does not hold mlp weights: it is a checkpoint of a lenet; "));
  EXPECT_THAT(err, HasSubstr("; these start a run with --model lenet"));

  // Weights that are not finite are refused as a checkpoint's are, naming the tensor and the element.
  nn::StateDict broken = a;
  Tensor fc2 = broken["fc2.weight"].clone();
  fc2.view({-1})[7].fill_(std::numeric_limits<float>::quiet_NaN());
  broken.insert_or_assign("fc2.weight", fc2);
  const fs::path nan_file = first.parent_path() / "nan.safetensors";
  io::save_safetensors(nan_file, broken);
  std::tie(code, err) = run_cohort(train_flags(third, {"--init-from", nan_file.string()}));
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("--init-from " + nan_file.string() + ": tensor 'fc2.weight' (element 7: nan) is not "
                             "finite; weights that are not finite cannot start a run"));
  EXPECT_FALSE(fs::exists(third / "checkpoints"));
  fs::remove_all(first.parent_path());
}

TEST(FineTune, ErrorsNameTheFileThePatternAndTheKeys) {
  const fs::path run = fresh_test_dir("finetune", "errors");
  auto [code, err] = run_cohort(train_flags(run, {"--init-from", "/no/such/weights.pt"}));
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("--init-from /no/such/weights.pt"));
  std::tie(code, err) = run_cohort(train_flags(run, {"--freeze", "encoder.*"}));
  EXPECT_EQ(code, 2);
  EXPECT_THAT(err, HasSubstr("--freeze pattern 'encoder.*' matches no parameter"));
  // Another architecture: the error says whose names the file holds and which differ.
  std::tie(code, err) = run_cohort(train_flags(run, {"--model", "mlp", "--init-from", pytorch_lenet().string()}));
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("--init-from " + pytorch_lenet().string() + ": the file does not hold mlp weights: its 10 "
                             "tensors are named like conv1.weight, conv1.bias, conv2.weight, conv2.bias and 6 more; "));
  EXPECT_THAT(err, HasSubstr("the file's conv1.weight, conv1.bias, conv2.weight, conv2.bias are not in the model; "
                             "hint: --init-from needs the weights of the model being trained"));
  EXPECT_THAT(err, ::testing::Not(HasSubstr("strict=false"))) << "a library option the command line does not have";

  // A classifier for another number of classes keeps its initial values, and cannot be frozen.
  auto seven = models::create("lenet", models::ModelOptions().in_channels(1).image_size(28).num_classes(7));
  std::ostringstream log;
  const auto skipped = app::init_from(*seven, pytorch_lenet().string(), log);
  EXPECT_EQ(skipped, (std::vector<std::string>{"fc3.weight", "fc3.bias"}));
  EXPECT_THAT(log.str(), HasSubstr("fc3.weight has shape [10, 84] in the file and [7, 84] in the model"));
  EXPECT_THAT(error_of([&] { app::freeze(*seven, "fc*", skipped); }),
              HasSubstr("would freeze fc3.weight, which --init-from could not load"));
  const auto trainable = app::freeze(*seven, "conv*", skipped);
  EXPECT_EQ(trainable.size(), 6u);
  EXPECT_FALSE(seven->named_parameters()["conv1.weight"].requires_grad());
  EXPECT_TRUE(seven->named_parameters()["fc1.weight"].requires_grad());
  fs::remove_all(run.parent_path());
}

TEST(FineTune, InitFromADataParallelStateDictStripsModuleAndSaysSo) {
  // PyTorch's lenet weights as a DataParallel-wrapped model saves them: "module.conv1.weight", ...
  const fs::path dir = fresh_test_dir("finetune", "data-parallel");
  fs::create_directories(dir);
  io::PyValue::DictItems items;
  const auto lenet = io::load_pytorch_state_dict(pytorch_lenet());
  for (const auto& item : lenet) items.emplace_back("module." + item.key(), item.value());
  const fs::path file = dir / "ddp_lenet.pt";
  io::write_torch_file(file, io::PyValue::dict(items, /*ordered=*/true));

  auto net = models::create("lenet", models::ModelOptions().in_channels(1).image_size(28));
  std::ostringstream log;
  EXPECT_TRUE(app::init_from(*net, file.string(), log).empty());
  EXPECT_THAT(log.str(), HasSubstr("cohort: --init-from " + file.string() + ": every key starts with 'module.'"));
  EXPECT_THAT(log.str(), HasSubstr("stripped 'module.' from the 10 names"));
  const auto loaded = net->named_parameters();
  EXPECT_TRUE(loaded["conv1.weight"].equal(lenet["conv1.weight"]));
  EXPECT_TRUE(loaded["fc3.bias"].equal(lenet["fc3.bias"]));

  // The plain file loads silently.
  std::ostringstream quiet;
  app::init_from(*net, pytorch_lenet().string(), quiet);
  EXPECT_EQ(quiet.str(), "");
  fs::remove_all(dir.parent_path());
}

}  // namespace
}  // namespace cohort::testing
