// The blitz's CIFAR-10 network: one training step (forward, cross-entropy, backward, SGD step) at a
// given batch size; prints the median milliseconds. bench/compare_blitz_cnn.sh runs it next to the
// same step in PyTorch (bench/blitz_cnn_torch.py).
//   blitz_cnn [batch=64] [reps=20]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cohort/cohort.h>

using namespace cohort;
namespace F = cohort::nn::functional;

struct BlitzCnn : nn::Module {
  BlitzCnn() : conv1(nn::Conv2dOptions(3, 6, 5)), conv2(nn::Conv2dOptions(6, 16, 5)), fc1(400, 120), fc2(120, 84), fc3(84, 10) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
    register_module("fc3", fc3);
  }
  Tensor forward(Tensor x) {
    x = F::max_pool2d(F::relu(conv1(x)), F::MaxPool2dFuncOptions(2));
    x = F::max_pool2d(F::relu(conv2(x)), F::MaxPool2dFuncOptions(2));
    x = x.view({-1, 400});
    return fc3(F::relu(fc2(F::relu(fc1(x)))));
  }
  nn::Conv2d conv1, conv2;
  nn::Linear fc1, fc2, fc3;
};

int main(int argc, char** argv) {
  const int64_t batch = argc > 1 ? std::atoll(argv[1]) : 64;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 20;
  manual_seed(0);
  auto net = std::make_shared<BlitzCnn>();
  optim::SGD optimizer(net->parameters(), optim::SGDOptions(0.001).momentum(0.9));
  Tensor images = randn({batch, 3, 32, 32});
  Tensor labels = randint(0, 10, {batch});
  auto step = [&] {
    optimizer.zero_grad();
    Tensor loss = F::cross_entropy(net->forward(images), labels);
    loss.backward();
    optimizer.step();
  };
  for (int i = 0; i < 3; ++i) step();  // warm-up: oneDNN primitives are created on first use
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    auto start = std::chrono::steady_clock::now();
    step();
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  std::printf("cohort blitz_cnn train step, batch %lld: median %.3f ms\n", static_cast<long long>(batch), times[times.size() / 2]);
  return 0;
}
