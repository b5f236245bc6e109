// ImageFolder: torchvision's layout (sorted classes, files at any depth, other files skipped), decoding in
// get(), errors that name the root and the class, batches identical for any worker count with random
// transforms, and a small CNN learning scripts/make_shapes_dataset.py's shapes well above chance.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "cohort/autograd/grad_mode.h"
#include "cohort/core/generator.h"
#include "cohort/data/dataloader.h"
#include "cohort/data/image_folder.h"
#include "cohort/data/transforms.h"
#include "cohort/io/image.h"
#include "cohort/nn/activation.h"
#include "cohort/nn/basic.h"
#include "cohort/nn/batchnorm.h"
#include "cohort/nn/container.h"
#include "cohort/nn/conv.h"
#include "cohort/nn/functional/loss.h"
#include "cohort/nn/linear.h"
#include "cohort/nn/pooling.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/reduction.h"
#include "cohort/optim/adam.h"
#include "io/io_test_util.h"
#include "support/error_of.h"
#include "support/paths.h"
#include "support/subprocess.h"

using namespace cohort;
namespace T = cohort::data::transforms;
namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using cohort::testing::error_of;

namespace {

class ImageFolderTest : public cohort::testing::ScratchDir {
 protected:
  // A uint8 [h, w, c] image whose bytes depend on `seed`.
  static Tensor picture(int64_t h, int64_t w, int64_t c, int seed) {
    Tensor t = empty({h, w, c}, TensorOptions(kUInt8));
    for (int64_t i = 0; i < t.numel(); ++i) t.data_ptr<uint8_t>()[i] = static_cast<uint8_t>((i * 7 + seed * 31) % 256);
    return t;
  }
  std::string put(const std::string& rel, const Tensor& img) {
    const fs::path p = path(rel);
    fs::create_directories(p.parent_path());
    io::write_png(p.string(), img);
    return p.string();
  }
};

TEST_F(ImageFolderTest, ReadsTorchvisionsLayout) {
  put("root/dog/b.png", picture(5, 7, 3, 1));
  put("root/dog/a.PNG", picture(9, 4, 1, 2));  // grey, read as RGB
  put("root/cat/deep/er/c.png", picture(6, 6, 4, 3));
  std::ofstream(path("root/cat/notes.txt")) << "not an image";
  data::ImageFolder ds(path("root").string());
  EXPECT_THAT(ds.classes(), ElementsAre("cat", "dog"));
  EXPECT_EQ(ds.class_to_idx().at("dog"), 1);
  ASSERT_EQ(ds.size(), 3);
  EXPECT_EQ(ds.samples()[0].first, path("root/cat/deep/er/c.png").string());
  EXPECT_EQ(ds.samples()[1].first, path("root/dog/a.PNG").string());
  EXPECT_THAT(ds.targets(), ElementsAre(0, 1, 1));
  data::Example<> e = ds.get(1);
  EXPECT_EQ(e.data.sizes(), (Shape{9, 4, 3}));
  EXPECT_EQ(e.data.dtype(), kUInt8);
  EXPECT_EQ(e.target.dim(), 0);
  EXPECT_EQ(e.target.item<int64_t>(), 1);
  Tensor rgba = ds.get(0).data;
  EXPECT_EQ(rgba.sizes(), (Shape{6, 6, 3}));
  EXPECT_TRUE(rgba.equal(picture(6, 6, 4, 3).narrow(2, 0, 3).contiguous()));
  EXPECT_THAT(error_of([&] { ds.get(3); }), HasSubstr("ImageFolder: index 3 is out of range for 3 images"));
}

TEST_F(ImageFolderTest, ErrorsNameTheRootAndTheClass) {
  EXPECT_THAT(error_of([&] { data::ImageFolder(path("missing").string()); }),
              HasSubstr("ImageFolder: " + path("missing").string() + " is not a directory"));
  fs::create_directories(path("flat"));
  put("flat/x.png", picture(2, 2, 3, 0));
  EXPECT_THAT(error_of([&] { data::ImageFolder(path("flat").string()); }),
              HasSubstr("ImageFolder: " + path("flat").string() + " has no class folders"));
  put("r/a/x.png", picture(2, 2, 3, 0));
  fs::create_directories(path("r/b"));
  std::ofstream(path("r/b/x.gif")) << "GIF89a";
  EXPECT_THAT(error_of([&] { data::ImageFolder(path("r").string()); }),
              HasSubstr("ImageFolder: " + path("r").string() +
                        ": the class folder 'b' holds no .jpg, .jpeg or .png file (1 other files skipped)"));
  // A broken file is named when it is decoded.
  std::ofstream(path("r/b/y.png")) << "not a png";
  data::ImageFolder ds(path("r").string());
  EXPECT_THAT(error_of([&] { ds.get(1); }), HasSubstr(path("r/b/y.png").string() + ": not a JPEG or PNG file"));
}

TEST_F(ImageFolderTest, SymlinkLoopsAndDanglingLinksAreSkippedAndCounted) {
  put("root/cat/a.png", picture(2, 2, 3, 0));
  put("root/dog/b.png", picture(2, 2, 3, 1));
  fs::create_directory_symlink("..", path("root/cat/up"));     // back to the root: every class again
  fs::create_directory_symlink(".", path("root/dog/self"));    // itself
  fs::create_symlink("missing.png", path("root/dog/gone.png"));  // to nothing
  fs::create_symlink("me.png", path("root/dog/me.png"));          // to itself
  put("elsewhere/c.png", picture(2, 2, 3, 2));
  fs::create_directory_symlink(path("elsewhere"), path("root/cat/more"));  // a folder kept elsewhere: followed
  fs::create_symlink(path("root/missing-class"), path("root/ghost"));     // a class link to nothing
  std::ofstream(path("root/cat/notes.txt")) << "not an image";
  data::ImageFolder ds(path("root").string());
  EXPECT_THAT(ds.classes(), ElementsAre("cat", "dog"));
  ASSERT_EQ(ds.size(), 3);
  EXPECT_EQ(ds.samples()[1].first, path("root/cat/more/c.png").string());
  EXPECT_EQ(ds.skipped().other_files, 1);
  EXPECT_EQ(ds.skipped().dangling_links, 3);
  EXPECT_EQ(ds.skipped().repeated_dirs, 2);
  const std::string summary = ds.skipped_summary();
  EXPECT_THAT(summary, HasSubstr("1 file that is not a .jpg, .jpeg or .png (" + path("root/cat/notes.txt").string() + ")"));
  EXPECT_THAT(summary, HasSubstr("3 symbolic links to nothing ("));
  EXPECT_THAT(summary, HasSubstr("2 folder links that lead to folders already read ("));
  EXPECT_THAT(summary, HasSubstr(", ...): a loop?"));
  put("clean/a/x.png", picture(2, 2, 3, 0));
  put("clean/b/y.png", picture(2, 2, 3, 0));
  EXPECT_EQ(data::ImageFolder(path("clean").string()).skipped_summary(), "");
}

TEST_F(ImageFolderTest, BatchesAreTheSameForAnyWorkerCount) {
  for (int i = 0; i < 10; ++i)
    put("root/" + std::string(i % 2 ? "odd" : "even") + "/" + std::to_string(i) + ".png",
        picture(10 + 3 * i, 30 - 2 * i, 3, i));  // every image a different size
  // One random transform in the dataset (default generator, seeded per batch), one in the loader
  // (per-sample generator).
  auto ds = std::make_shared<data::ImageFolder>(
      path("root").string(), T::Compose({T::RandomResizedCrop(12), T::ColorJitter(0.3, 0.3, 0.3, 0.05)}));
  std::vector<Tensor> first;
  for (int workers : {0, 1, 3}) {
    data::DataLoader loader(ds, data::DataLoaderOptions().batch_size(3).shuffle(true).seed(5).num_workers(workers).transform(
                                    T::Compose({T::RandomHorizontalFlip(), T::ToTensor()})));
    std::vector<Tensor> batches;
    for (const data::Batch& b : loader) batches.push_back(b.data);
    ASSERT_EQ(batches.size(), 4u);
    EXPECT_EQ(batches[0].sizes(), (Shape{3, 3, 12, 12}));
    if (first.empty()) first = batches;
    for (size_t k = 0; k < batches.size(); ++k) EXPECT_TRUE(batches[k].equal(first[k])) << workers << " workers, batch " << k;
  }
}

// The shapes data set (200 images a class), a small CNN, 10 epochs: validation accuracy far above chance
// (1 in 5). PyTorch with the same network and data reaches 0.8-0.9.
TEST_F(ImageFolderTest, SmallCnnLearnsTheShapesDataSet) {
  const auto probe = cohort::testing::run_process({"/usr/bin/python3", "-c", "import PIL, numpy"}, dir_, "probe",
                                                  std::chrono::seconds(120));
  if (probe.exit_code != 0) GTEST_SKIP() << "/usr/bin/python3 has no PIL (scripts/install-deps.sh installs python3-pil)";
  const std::string script = cohort::testing::fixtures_dir() + "/../../scripts/make_shapes_dataset.py";
  const auto made = cohort::testing::run_process({"/usr/bin/python3", script, path("shapes").string(), "--train", "200",
                                                  "--val", "40", "--min-size", "32", "--max-size", "64"},
                                                 dir_, "make", std::chrono::seconds(300));
  ASSERT_EQ(made.exit_code, 0) << made.err;

  manual_seed(0);
  auto train = std::make_shared<data::ImageFolder>(path("shapes/train").string(), T::Resize({32, 32}));
  auto val = std::make_shared<data::ImageFolder>(path("shapes/val").string(), T::Resize({32, 32}));
  EXPECT_THAT(train->classes(), ElementsAre("circle", "cross", "square", "star", "triangle"));
  const auto to_input = T::Compose({T::ToTensor(), T::Normalize<>({0.5, 0.5, 0.5}, {0.25, 0.25, 0.25})});
  data::DataLoader train_loader(train, data::DataLoaderOptions().batch_size(32).shuffle(true).seed(1).num_workers(2)
                                           .transform(T::Compose({T::RandomHorizontalFlip(), to_input})));
  data::DataLoader val_loader(val, data::DataLoaderOptions().batch_size(50).transform(to_input));

  nn::Sequential net(nn::Conv2d(nn::Conv2dOptions(3, 16, 3).padding(1)), nn::BatchNorm2d(16), nn::ReLU(), nn::MaxPool2d(2),
                     nn::Conv2d(nn::Conv2dOptions(16, 32, 3).padding(1)), nn::BatchNorm2d(32), nn::ReLU(), nn::MaxPool2d(2),
                     nn::Conv2d(nn::Conv2dOptions(32, 64, 3).padding(1)), nn::BatchNorm2d(64), nn::ReLU(),
                     nn::AdaptiveMaxPool2d(nn::AdaptiveMaxPool2dOptions(1)), nn::Flatten(), nn::Linear(64, 5));
  optim::Adam opt(net->parameters(), optim::AdamOptions(3e-3));
  double accuracy = 0;
  for (int epoch = 0; epoch < 10; ++epoch) {
    net->train();
    double loss_sum = 0;
    int steps = 0;
    for (const data::Batch& b : train_loader) {
      opt.zero_grad();
      Tensor loss = nn::functional::cross_entropy(net->forward(b.data), b.target);
      loss.backward();
      opt.step();
      loss_sum += loss.item<double>(), ++steps;
    }
    net->eval();
    NoGradGuard no_grad;
    int64_t correct = 0, seen = 0;
    for (const data::Batch& b : val_loader) {
      correct += net->forward(b.data).argmax(1).eq(b.target).sum().item<int64_t>();
      seen += b.size();
    }
    accuracy = static_cast<double>(correct) / static_cast<double>(seen);
    std::printf("[ shapes   ] epoch %d: training loss %.3f, validation accuracy %.3f\n", epoch + 1, loss_sum / steps,
                accuracy);
  }
  EXPECT_GT(accuracy, 0.6) << "chance is 0.2";
}

}  // namespace
