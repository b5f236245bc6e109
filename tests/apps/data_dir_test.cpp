// `cohort train` and `cohort eval` over a dataset directory (a tiny MNIST written here): the directory
// is stored absolute and may change on resume, eval reads the test split alone, and a data file
// that is not a regular file is named for what it is.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/run_checkpoint.h"
#include "apps/run_cohort.h"

namespace fs = std::filesystem;
using cohort::testing::run_cohort;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

fs::path fresh_dir(const std::string& name) {
  fs::path dir = cohort::testing::fresh_test_dir("data-dir", name);
  fs::create_directories(dir);
  return dir;
}

// An IDX file: magic 00 00 08 <ndims>, big-endian uint32 dims, then the bytes.
void write_idx(const fs::path& path, const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data) {
  std::string s = {0, 0, 8, static_cast<char>(dims.size())};
  for (uint32_t d : dims)
    for (int shift : {24, 16, 8, 0}) s += static_cast<char>((d >> shift) & 0xff);
  s.append(data.begin(), data.end());
  std::ofstream(path, std::ios::binary) << s;
}

// An MNIST directory with `train` and `test` images: class c is a bright row c, so a network learns it.
void write_mnist(const fs::path& dir, uint32_t train, uint32_t test) {
  fs::create_directories(dir);
  for (auto [prefix, n] : {std::pair<std::string, uint32_t>{"train", train}, {"t10k", test}}) {
    std::vector<uint8_t> images(n * 784, 0), labels(n);
    for (uint32_t k = 0; k < n; ++k) {
      labels[k] = static_cast<uint8_t>(k % 10);
      for (int x = 0; x < 28; ++x) images[k * 784 + (2 + 2 * labels[k]) * 28 + x] = 255;
    }
    write_idx(dir / (prefix + "-images-idx3-ubyte"), {n, 28, 28}, images);
    write_idx(dir / (prefix + "-labels-idx1-ubyte"), {n}, labels);
  }
}

std::vector<std::string> mnist_flags(const std::string& data_dir, const fs::path& out) {
  return {"train", "--dataset", "mnist", "--data-dir", data_dir, "--batch-size", "16", "--model", "mlp",
          "--lr", "0.05", "--workers", "0", "--threads", "1", "--no-progress", "--epochs", "1",
          "--out", out.string()};
}

// Runs `body` with the working directory `dir`, restored after.
template <class F>
void in_directory(const fs::path& dir, F body) {
  const fs::path before = fs::current_path();
  fs::current_path(dir);
  body();
  fs::current_path(before);
}

}  // namespace

// A relative --data-dir is stored absolute, so the run resumes from any directory; after the data
// moved, --resume takes a new --data-dir (like --threads, it says where, not what).
TEST(DataDir, IsStoredAbsoluteAndMayChangeOnResume) {
  const fs::path dir = fresh_dir("moves");
  write_mnist(dir / "data", 64, 32);
  const fs::path out = dir / "run";
  in_directory(dir, [&] {
    auto [code, err] = run_cohort(mnist_flags("data", out));
    ASSERT_EQ(code, 0) << err;
  });
  EXPECT_EQ(cohort::app::read_checkpoint(out).config.data_dir, (dir / "data").string());
  // From elsewhere, with the stored directory.
  auto [code, err] = run_cohort({"train", "--resume", out.string(), "--epochs", "2", "--threads", "1", "--no-progress"});
  ASSERT_EQ(code, 0) << err;
  // The data moved: the old place is named with the way forward, and a new --data-dir is taken.
  fs::rename(dir / "data", dir / "moved");
  std::tie(code, err) = run_cohort({"train", "--resume", out.string(), "--epochs", "3", "--no-progress"});
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("the MNIST directory " + (dir / "data").string() + " does not exist"));
  std::tie(code, err) = run_cohort({"train", "--resume", out.string(), "--epochs", "3", "--threads", "1",
                                    "--no-progress", "--data-dir", (dir / "moved").string()});
  ASSERT_EQ(code, 0) << err;
  EXPECT_EQ(cohort::app::read_checkpoint(out).config.data_dir, (dir / "moved").string());
  EXPECT_EQ(cohort::app::read_checkpoint(out).progress.loader.epoch, 3);
}

// eval reads the test split only: it works with the training files gone.
TEST(DataDir, EvalReadsOnlyTheTestSplit) {
  const fs::path dir = fresh_dir("eval");
  write_mnist(dir / "data", 64, 32);
  auto [code, err] = run_cohort(mnist_flags((dir / "data").string(), dir / "run"));
  ASSERT_EQ(code, 0) << err;
  fs::remove(dir / "data" / "train-images-idx3-ubyte");
  fs::remove(dir / "data" / "train-labels-idx1-ubyte");
  ::testing::internal::CaptureStdout();
  std::tie(code, err) = run_cohort({"eval", "--checkpoint", (dir / "run").string(), "--threads", "1"});
  const std::string printed = ::testing::internal::GetCapturedStdout();
  ASSERT_EQ(code, 0) << err;
  EXPECT_THAT(printed, HasSubstr("Accuracy of the network on the 32 test images"));
  // Its errors are eval's.
  std::tie(code, err) =
      run_cohort({"eval", "--checkpoint", (dir / "run").string(), "--data-dir", (dir / "nowhere").string()});
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr("cohort eval: the MNIST directory " + (dir / "nowhere").string() + " does not exist"));
  EXPECT_THAT(err, Not(HasSubstr("cohort train")));
}

// A FIFO, a directory or a symlink loop in place of a data file, and a file as --data-dir: each said
// for what it is (a FIFO would have hung the reader).
TEST(DataDir, AFileThatIsNotARegularFileIsNamedForWhatItIs) {
  const fs::path dir = fresh_dir("types");
  write_mnist(dir / "data", 32, 16);
  const fs::path images = dir / "data" / "train-images-idx3-ubyte";
  fs::remove(images);
  ASSERT_EQ(::mkfifo(images.c_str(), 0644), 0);
  auto [code, err] = run_cohort(mnist_flags((dir / "data").string(), dir / "fifo"));
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err, HasSubstr(images.string() + ": is a FIFO, not a regular file"));
  fs::remove(images);
  fs::create_symlink(images, images);
  std::tie(code, err) = run_cohort(mnist_flags((dir / "data").string(), dir / "loop"));
  EXPECT_THAT(err, HasSubstr(images.string() + ": too many levels of symbolic links"));
  std::tie(code, err) = run_cohort(mnist_flags((dir / "data" / "t10k-labels-idx1-ubyte").string(), dir / "file"));
  EXPECT_THAT(err, HasSubstr("t10k-labels-idx1-ubyte is not a directory"));
}
