// Port of the 60-minute blitz's neural-network section ("3. 神经网络" in its Chinese translation):
// define LeNet, list its parameters, run a 1x1x32x32 input forward and backward, compute an MSE loss,
// follow the graph back through grad_fn, update the weights by hand and then with optim::SGD. Ends by
// checking the key facts and returns non-zero if one fails (CI runs it).
#include <cstdio>
#include <iostream>

#include <cohort/cohort.h>

using namespace cohort;
// repr(t) prints a tensor as the tutorial's Python does (std::cout << t prints libtorch's format).
namespace F = cohort::nn::functional;

// The tutorial's Net: conv(1->6, 5x5) - pool - conv(6->16, 5x5) - pool - 3 Linear layers.
struct Net : nn::Module {
  Net()
      : conv1(nn::Conv2dOptions(1, 6, 5)),
        conv2(nn::Conv2dOptions(6, 16, 5)),
        fc1(16 * 5 * 5, 120),
        fc2(120, 84),
        fc3(84, 10) {
    register_module("conv1", conv1);
    register_module("conv2", conv2);
    register_module("fc1", fc1);
    register_module("fc2", fc2);
    register_module("fc3", fc3);
  }

  Tensor forward(Tensor x) {
    // Max pooling over a (2, 2) window; a square window can be given as one number.
    x = F::max_pool2d(F::relu(conv1(x)), F::MaxPool2dFuncOptions({2, 2}));
    x = F::max_pool2d(F::relu(conv2(x)), F::MaxPool2dFuncOptions(2));
    x = x.view({-1, num_flat_features(x)});
    x = F::relu(fc1(x));
    x = F::relu(fc2(x));
    return fc3(x);
  }

  static int64_t num_flat_features(const Tensor& x) {
    int64_t n = 1;
    for (int64_t d = 1; d < x.dim(); ++d) n *= x.size(d);  // all dims but the batch
    return n;
  }

  nn::Conv2d conv1, conv2;
  nn::Linear fc1, fc2, fc3;
};

int main() {
  manual_seed(0);
  int failures = 0;
  auto check = [&](bool ok, const char* what) {
    std::printf("%s: %s\n", ok ? "ok" : "FAILED", what);
    failures += !ok;
  };

  auto net = std::make_shared<Net>();
  std::cout << *net << "\n";

  // net.parameters(): 10 tensors (weight and bias of 5 layers); conv1's weight is [6, 1, 5, 5].
  auto params = net->parameters();
  std::cout << params.size() << "\n" << params[0].sizes() << "\n";
  check(params.size() == 10, "LeNet has 10 parameter tensors");
  check(params[0].sizes() == IntArrayRef({6, 1, 5, 5}), "conv1.weight is [6, 1, 5, 5]");

  // A random 32x32 input; the network expects a batch, so the sample is [1, 1, 32, 32].
  Tensor input = randn({1, 1, 32, 32});
  Tensor out = net->forward(input);
  std::cout << repr(out) << "\n";
  check(out.sizes() == IntArrayRef({1, 10}), "the output is [1, 10]");

  // Zero the gradient buffers of all parameters and backprop with random gradients.
  net->zero_grad();
  out.backward(randn({1, 10}));
  check(net->conv1->bias.grad().defined(), "backward with a random gradient reaches conv1.bias");

  // Loss function: MSE against a dummy target of the output's shape.
  out = net->forward(input);
  Tensor target = randn({10}).view({1, -1});
  nn::MSELoss criterion;
  Tensor loss = criterion(out, target);
  std::cout << repr(loss) << "\n";

  // Following loss backwards through grad_fn. PyTorch shows one fused MseLossBackward0; cohort's
  // mse_loss is a composition (mean of the squared difference), so its nodes show instead.
  std::cout << loss.grad_fn()->name() << "\n";
  std::cout << loss.grad_fn()->next_functions()[0]->name() << "\n";
  std::cout << loss.grad_fn()->next_functions()[0]->next_functions()[0]->name() << "\n";

  // Backprop: conv1's bias gradient before and after backward.
  net->zero_grad(false);
  std::cout << "conv1.bias.grad before backward\n" << repr(net->conv1->bias.grad()) << "\n";
  loss.backward();
  std::cout << "conv1.bias.grad after backward\n" << repr(net->conv1->bias.grad()) << "\n";
  check(net->conv1->bias.grad().abs().sum().item<float>() > 0, "the loss gradient reaches conv1.bias");

  // Updating the weights by hand: weight = weight - learning_rate * gradient.
  const double learning_rate = 0.01;
  Tensor before = net->fc3->bias.clone();
  {
    NoGradGuard no_grad;
    for (Tensor& p : net->parameters()) p.sub_(p.grad() * learning_rate);
  }
  check(net->fc3->bias.allclose(before - net->fc3->bias.grad() * learning_rate), "the manual SGD step");

  // The same with optim::SGD: zero_grad, forward, loss, backward, step.
  optim::SGD optimizer(net->parameters(), optim::SGDOptions(learning_rate));
  float first = 0, last = 0;
  for (int step = 0; step < 20; ++step) {
    optimizer.zero_grad();
    Tensor l = criterion(net->forward(input), target);
    l.backward();
    optimizer.step();
    (step == 0 ? first : last) = l.item<float>();
  }
  std::printf("loss after 1 step %.4f, after 20 steps %.4f\n", first, last);
  check(last < first, "optim::SGD lowers the loss on a fixed example");
  return failures == 0 ? 0 : 1;
}
