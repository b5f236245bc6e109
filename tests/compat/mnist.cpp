// The libtorch-port promise for a training program in the style of libtorch's MNIST example:
// datasets::MNIST(...).map(Normalize<>(...)).map(Stack<>()), make_data_loader with a sequential and
// a random sampler, a small convolutional net trained a few hundred steps with SGD (compat.h has the
// rules). The data is Debian's Fashion-MNIST (MNIST's file format); libtorch reads only uncompressed
// IDX files, so the program gunzips the four files into a scratch directory first. The random streams
// differ between the libraries, so the checks are on the trend: the loss falls and the test accuracy
// ends far above chance.
#include "compat.h"

#include <stdlib.h>
#include <unistd.h>
#include <cstdio>
#include <string>

using namespace compat;

namespace {

const char* kSource = "/usr/share/datasets/fashion-mnist";

// A scratch directory holding the four IDX files uncompressed; empty when that fails.
std::string unpack_dataset() {
  char dir[] = "/tmp/compat-mnist.XXXXXX";
  if (mkdtemp(dir) == nullptr) return {};
  for (const char* name : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                           "t10k-labels-idx1-ubyte"}) {
    const std::string command =
        std::string("gunzip -c ") + kSource + "/" + name + ".gz > " + dir + "/" + name;
    if (std::system(command.c_str()) != 0) return {};
  }
  return dir;
}

struct Net : torch::nn::Module {
  Net()
      : conv1(torch::nn::Conv2dOptions(1, 8, /*kernel_size=*/5)),
        conv2(torch::nn::Conv2dOptions(8, 16, /*kernel_size=*/5)),
        fc1(256, 64),
        fc2(64, 10) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
  }

  torch::Tensor forward(torch::Tensor x) {
    x = torch::relu(torch::max_pool2d(conv1->forward(x), 2));  // [B, 8, 12, 12]
    x = torch::relu(torch::max_pool2d(conv2->forward(x), 2));  // [B, 16, 4, 4]
    x = x.view({-1, 256});
    x = torch::relu(fc1->forward(x));
    return torch::log_softmax(fc2->forward(x), /*dim=*/1);
  }

  torch::nn::Conv2d conv1;
  torch::nn::Conv2d conv2;
  torch::nn::Linear fc1;
  torch::nn::Linear fc2;
};

std::string g_root;

// ---------------------------------------------------------------------------------------------------
void dataset() {
  torch::data::datasets::MNIST train(g_root);
  check(train.size().value() == 60000 && train.is_train(), "MNIST train: 60000 examples");
  check(has_sizes(train.images(), {60000, 1, 28, 28}) && train.images().scalar_type() == torch::kFloat32,
        "MNIST images: float32 [N, 1, 28, 28]");
  check(train.images().min().item<float>() == 0.0f && train.images().max().item<float>() == 1.0f,
        "MNIST images in [0, 1]");
  check(has_sizes(train.targets(), {60000}) && train.targets().scalar_type() == torch::kInt64,
        "MNIST targets: int64 [N]");
  auto example = train.get(0);
  check(has_sizes(example.data, {1, 28, 28}) && example.target.dim() == 0 && example.target.item<int64_t>() == 9,
        "MNIST get(0): [1, 28, 28], the first Fashion-MNIST label is 9");
  // Sum of the first image's bytes (76247, from Python's gzip module) over 255.
  check(near(example.data.sum().item<double>(), 76247.0 / 255.0, 1e-5), "MNIST get(0): byte / 255");
  torch::data::datasets::MNIST test(g_root, torch::data::datasets::MNIST::Mode::kTest);
  check(test.size().value() == 10000 && !test.is_train(), "MNIST test: 10000 examples");
}

// ---------------------------------------------------------------------------------------------------
void training() {
  torch::manual_seed(0);
  auto train_dataset = torch::data::datasets::MNIST(g_root)
                           .map(torch::data::transforms::Normalize<>(0.2860, 0.3530))
                           .map(torch::data::transforms::Stack<>());
  const size_t train_size = train_dataset.size().value();
  check(train_size == 60000, "the mapped dataset keeps MNIST's size");
  auto train_loader = torch::data::make_data_loader(
      std::move(train_dataset), torch::data::DataLoaderOptions().batch_size(64).workers(2));

  auto test_dataset = torch::data::datasets::MNIST(g_root, torch::data::datasets::MNIST::Mode::kTest)
                          .map(torch::data::transforms::Normalize<>(0.2860, 0.3530))
                          .map(torch::data::transforms::Stack<>());
  auto test_loader = torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
      std::move(test_dataset), 1000);

  auto model = std::make_shared<Net>();
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));

  const int kSteps = 300;
  double first_loss = 0, last_loss = 0;
  int step = 0;
  model->train();
  for (auto& batch : *train_loader) {
    check(has_sizes(batch.data, {64, 1, 28, 28}) && has_sizes(batch.target, {64}), "train batch shapes");
    optimizer.zero_grad();
    auto loss = torch::nll_loss(model->forward(batch.data), batch.target);
    loss.backward();
    optimizer.step();
    // Averages over the first and the last 50 steps.
    if (step < 50) first_loss += loss.item<double>() / 50;
    if (step >= kSteps - 50) last_loss += loss.item<double>() / 50;
    if (++step == kSteps) break;
  }
  check(step == kSteps, "the loader gives at least 300 batches");
  std::cout << "mnist: mean loss " << first_loss << " over the first 50 steps, " << last_loss
            << " over the last 50\n";
  check(last_loss < 0.6 * first_loss, "the training loss falls");

  torch::NoGradGuard no_grad;
  model->eval();
  int64_t correct = 0, seen = 0, batches = 0;
  for (const auto& batch : *test_loader) {
    auto prediction = model->forward(batch.data).argmax(1);
    correct += prediction.eq(batch.target).sum().item<int64_t>();
    seen += batch.data.size(0);
    ++batches;
  }
  const double accuracy = static_cast<double>(correct) / static_cast<double>(seen);
  std::cout << "mnist: test accuracy " << accuracy << " after " << kSteps << " steps\n";
  check(seen == 10000 && batches == 10, "the test loader visits 10000 examples in 10 batches");
  check(accuracy > 0.65, "test accuracy far above chance (0.1)");
}

}  // namespace

int main() {
  g_root = unpack_dataset();
  if (g_root.empty()) {
    std::cerr << "mnist: could not unpack " << kSource << " (dataset-fashion-mnist) into a scratch directory\n";
    return 1;
  }
  section("dataset", dataset);
  section("training", training);
  std::system(("rm -rf " + g_root).c_str());
  return finish("mnist");
}
