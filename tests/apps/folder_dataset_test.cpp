// `cohort train --dataset folder:DIR`: an ImageFolder tree of PNGs of different sizes trains with
// --val-split or --val-dir, the run resumes and evaluates; the missing validation choice and a doubled
// directory are usage errors naming the flags.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "app/cli.h"
#include "apps/run_cohort.h"
#include "cohort/io/image.h"
#include "cohort/ops/creation.h"

using namespace cohort;
using cohort::testing::fresh_test_dir;
using cohort::testing::run_cohort;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

// root/<class>/<i>.png for two classes (dark and bright images), each image a different size.
void write_tree(const fs::path& root, int per_class) {
  for (int c = 0; c < 2; ++c) {
    fs::create_directories(root / (c ? "bright" : "dark"));
    for (int i = 0; i < per_class; ++i) {
      Tensor img = full({10 + i, 14 - i % 3, 3}, c ? 200 + i : 30 + i, TensorOptions(kUInt8));
      io::write_png((root / (c ? "bright" : "dark") / (std::to_string(i) + ".png")).string(), img);
    }
  }
}

TEST(FolderDataset, TrainsWithValSplitAndValDir) {
  const fs::path dir = fresh_test_dir("folder", "train");
  write_tree(dir / "train", 8);
  write_tree(dir / "val", 3);
  auto [code, err] = run_cohort({"train", "--dataset", "folder:" + (dir / "train").string(), "--val-split", "0.25",
                                 "--image-size", "8", "--model", "mlp", "--epochs", "1", "--batch-size", "4",
                                 "--threads", "1", "--no-progress", "--out", (dir / "run1").string()});
  EXPECT_EQ(code, 0) << err;
  EXPECT_THAT(err, HasSubstr("training mlp on folder (12 train, 4 test images"));
  EXPECT_TRUE(fs::exists(dir / "run1" / "samples.png"));

  std::tie(code, err) = run_cohort({"train", "--dataset", "folder", "--data-dir", (dir / "train").string(), "--val-dir",
                                    (dir / "val").string(), "--image-size", "8", "--model", "mlp", "--epochs", "1",
                                    "--threads", "1", "--no-progress", "--out", (dir / "run2").string()});
  EXPECT_EQ(code, 0) << err;
  EXPECT_THAT(err, HasSubstr("(16 train, 6 test images"));
  // The stored run goes on with the same data.
  std::tie(code, err) = run_cohort({"train", "--resume", (dir / "run2").string(), "--epochs", "2", "--threads", "1",
                                    "--no-progress"});
  EXPECT_EQ(code, 0) << err;
  std::tie(code, err) = run_cohort({"eval", "--checkpoint", (dir / "run2").string()});
  EXPECT_EQ(code, 0) << err;

  // eval tests on a folder given now, for a run that held out a share or had a folder of its own; the
  // training folder need not be there.
  write_tree(dir / "test", 5);
  fs::rename(dir / "train", dir / "train-moved");
  for (const char* run : {"run1", "run2"}) {
    cohort::testing::Printed p = cohort::testing::run_printing(
        {"eval", "--checkpoint", (dir / run).string(), "--val-dir", (dir / "test").string(), "--threads", "1"});
    EXPECT_EQ(p.code, 0) << p.err;
    EXPECT_THAT(p.out, HasSubstr("on the 10 test images")) << run;
  }
  // A test folder with other classes says which differ, on each side.
  fs::rename(dir / "test" / "dark", dir / "test" / "dim");
  std::tie(code, err) = run_cohort({"eval", "--checkpoint", (dir / "run2").string(), "--val-dir", (dir / "test").string()});
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("does not have the classes the model was trained on: 'dim' only in the test set; 'dark' "
                             "only in the model"));
  // So does training with such a validation folder.
  std::tie(code, err) = run_cohort({"train", "--dataset", "folder:" + (dir / "train-moved").string(), "--val-dir",
                                    (dir / "test").string(), "--model", "mlp", "--out", (dir / "run3").string()});
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("must hold the same class folders: 'dim' only in the validation folder; 'dark' only in "
                             "the training folder"));
  // The training folder's new place is asked for with a flag eval has.
  std::tie(code, err) = run_cohort({"eval", "--checkpoint", (dir / "run1").string()});
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("does not exist; hint: pass --data-dir DIR, the training folder's new place"));
  std::tie(code, err) = run_cohort({"eval", "--checkpoint", (dir / "run1").string(), "--val-dir", "/nowhere"});
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("the validation directory /nowhere does not exist"));
  fs::remove_all(dir);
}

TEST(FolderDataset, SymlinkLoopsAreSkippedAndReported) {
  // A folder link back up the tree ended the program with an uncaught filesystem_error; a link to
  // nothing was skipped without a word. Both are skipped and named in a warning.
  const fs::path dir = fresh_test_dir("folder", "links");
  write_tree(dir / "train", 4);
  fs::create_directory_symlink("..", dir / "train" / "dark" / "up");
  fs::create_symlink("gone.png", dir / "train" / "bright" / "broken.png");
  auto [code, err] = run_cohort({"train", "--dataset", "folder:" + (dir / "train").string(), "--val-split", "0.25",
                                 "--image-size", "8", "--model", "mlp", "--epochs", "1", "--batch-size", "4",
                                 "--threads", "1", "--no-progress", "--out", (dir / "run").string()});
  EXPECT_EQ(code, 0) << err;
  EXPECT_THAT(err, HasSubstr("(6 train, 2 test images"));
  EXPECT_THAT(err, HasSubstr("cohort train: warning: the image folder " + (dir / "train").string() + ": skipped 1 "
                             "symbolic link to nothing (" + (dir / "train" / "bright" / "broken.png").string() +
                             ") and 1 folder link that leads to a folder already read (" +
                             (dir / "train" / "dark" / "up").string() + "): a loop?"));
  fs::remove_all(dir);
}

TEST(FolderDataset, ErrorsNameTheFlags) {
  const fs::path dir = fresh_test_dir("folder", "errors");
  write_tree(dir / "train", 2);
  auto [code, err] = run_cohort({"train", "--dataset", "folder:" + (dir / "train").string(), "--no-progress",
                                 "--out", (dir / "run").string()});
  EXPECT_NE(code, 0);
  EXPECT_THAT(err, HasSubstr("--val-split: give exactly one for --dataset folder"));
  std::tie(code, err) = run_cohort({"train", "--dataset", "folder:" + (dir / "train").string(), "--data-dir",
                                    dir.string(), "--val-split", "0.5", "--out", (dir / "run").string()});
  EXPECT_EQ(code, 2);
  EXPECT_THAT(err, HasSubstr("--dataset folder:PATH names the data already; leave --data-dir out"));
  std::tie(code, err) = run_cohort({"train", "--dataset", "folder:" + (dir / "missing").string(), "--val-split", "0.5",
                                    "--no-progress", "--out", (dir / "run").string()});
  EXPECT_NE(code, 0);
  EXPECT_THAT(err, HasSubstr("image folder directory"));
  std::tie(code, err) = run_cohort({"train", "--dataset", "folder", "--val-split", "0.5", "--out", (dir / "run").string()});
  EXPECT_EQ(code, 2);
  EXPECT_THAT(err, HasSubstr("cohort train: --dataset folder needs a path, e.g. --dataset folder:photos"));

  // One class folder cannot train a classifier, as a one-class CSV target cannot.
  fs::remove_all(dir / "train" / "dark");
  std::tie(code, err) = run_cohort({"train", "--dataset", "folder:" + (dir / "train").string(), "--val-split", "0.5",
                                    "--no-progress", "--out", (dir / "run").string()});
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("cohort train: the image folder " + (dir / "train").string() + " has one class folder, "
                             "'bright'; a classifier needs at least two classes"));
  EXPECT_FALSE(fs::exists(dir / "run" / "checkpoints"));
  fs::remove_all(dir);
}

// A run resumed mid-epoch on data that has shrunk since: the error names the checkpoint and the data.
TEST(FolderDataset, ResumingOnDataThatChangedNamesTheCheckpoint) {
  const fs::path dir = fresh_test_dir("folder", "changed");
  write_tree(dir / "train", 10);
  const std::vector<std::string> flags = {"train", "--dataset", "folder:" + (dir / "train").string(), "--val-split",
                                          "0.2", "--image-size", "8", "--model", "mlp", "--epochs", "1",
                                          "--batch-size", "4", "--threads", "1", "--no-progress", "--out",
                                          (dir / "run").string(), "--checkpoint-every", "3", "--keep-checkpoints", "9"};
  auto [code, err] = run_cohort(flags);
  ASSERT_EQ(code, 0) << err;
  // Keep the checkpoint of step 3 (batch 3 of 4), as if the run had been killed after it.
  fs::path kept;
  for (const auto& entry : fs::directory_iterator(dir / "run" / "checkpoints")) {
    if (entry.path().filename().string().find("00000003") == std::string::npos) fs::remove(entry.path());
    else kept = entry.path();
  }
  ASSERT_FALSE(kept.empty());
  for (int i = 3; i < 10; ++i) {
    fs::remove(dir / "train" / "dark" / (std::to_string(i) + ".png"));
    fs::remove(dir / "train" / "bright" / (std::to_string(i) + ".png"));
  }
  std::tie(code, err) = run_cohort({"train", "--resume", (dir / "run").string(), "--no-progress"});
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("cohort train: --resume " + kept.string() + ": the checkpoint stopped at batch 3 of epoch 1, "
                             "but an epoch of the data in " + (dir / "train").string() + " has 2 batches now"));
  EXPECT_THAT(err, HasSubstr("hint: the data changed since the checkpoint"));
  fs::remove_all(dir);
}

// Flags the chosen dataset does not use are refused as --target is for anything but a table.
TEST(FolderDataset, FlagsOfOtherDatasetsAreRefused) {
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"--seq-len", "16"}, "--seq-len is only for --dataset text, got --dataset fashion-mnist"},
      {{"--image-size", "32"}, "--image-size is only for --dataset folder, got --dataset fashion-mnist"},
      {{"--val-dir", "/tmp"}, "--val-dir is only for --dataset folder, got --dataset fashion-mnist"},
      {{"--val-split", "0.1"}, "--val-split is only for --dataset folder and csv, got --dataset fashion-mnist"},
      {{"--dataset", "csv:t.csv", "--target", "y", "--model", "mlp", "--image-size", "8"},
       "--image-size is only for --dataset folder, got --dataset csv"},
      {{"--dataset", "text:t.txt", "--model", "char-lstm", "--val-split", "0.1"},
       "--val-split is only for --dataset folder and csv, got --dataset text"},
  };
  for (const auto& [flags, message] : cases) {
    std::vector<std::string> args{"train", "--out", fresh_test_dir("folder", "other-flags").string()};
    args.insert(args.end(), flags.begin(), flags.end());
    auto [code, err] = run_cohort(args);
    EXPECT_EQ(code, 2) << err;
    EXPECT_THAT(err, HasSubstr(message));
  }
}

}  // namespace
