// The libtorch-port promise for transposed convolution and channel dropout: a small DCGAN-style
// generator (ConvTranspose2d, BatchNorm2d, ReLU, Tanh: noise -> 28x28 images), ConvTranspose's
// options, parameters and output_size, its values by hand and against conv2d (its adjoint) and
// against per-group convolutions, and Dropout2d in eval and train mode (compat.h has the rules).
#include "compat.h"

using namespace compat;

namespace {

// Deterministic values: 0.3 * sin(0.37 * k + offset), k the flat index.
torch::Tensor wave(std::vector<int64_t> sizes, double offset) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return torch::arange(n, torch::kFloat64).mul(0.37).add(offset).sin().mul(0.3).view(sizes);
}

double sum_of_products(const torch::Tensor& a, const torch::Tensor& b) { return (a * b).sum().item<double>(); }

// noise [N, 64, 1, 1] -> [N, 1, 28, 28]: 1 -> 4 -> 7 -> 14 -> 28.
struct Generator : torch::nn::Module {
  Generator()
      : up1(torch::nn::ConvTranspose2dOptions(64, 32, 4).bias(false)),
        up2(torch::nn::ConvTranspose2dOptions(32, 16, 3).stride(2).padding(1).bias(false)),
        up3(torch::nn::ConvTranspose2dOptions(16, 8, 4).stride(2).padding(1).bias(false)),
        up4(torch::nn::ConvTranspose2dOptions(8, 1, 4).stride(2).padding(1).bias(false)),
        bn1(32),
        bn2(16),
        bn3(8) {
    register_module("up1", up1);
    register_module("bn1", bn1);
    register_module("up2", up2);
    register_module("bn2", bn2);
    register_module("up3", up3);
    register_module("bn3", bn3);
    register_module("up4", up4);
  }
  torch::Tensor forward(torch::Tensor z) {
    auto x = torch::relu(bn1(up1(z)));
    x = torch::relu(bn2(up2(x)));
    x = torch::relu(bn3(up3(x)));
    return torch::tanh(up4(x));
  }
  torch::nn::ConvTranspose2d up1, up2, up3, up4;
  torch::nn::BatchNorm2d bn1, bn2, bn3;
};

void generator() {
  auto g = std::make_shared<Generator>();
  auto params = g->named_parameters();
  check(params.size() == 10, "4 weights, 3 x (BatchNorm weight, bias)");
  check(has_sizes(params["up1.weight"], {64, 32, 4, 4}), "ConvTranspose2d weight is [in, out, kH, kW]");
  check(has_sizes(params["up4.weight"], {8, 1, 4, 4}), "the last layer's weight");
  check(!params.contains("up1.bias"), "bias(false) registers no bias");

  auto z = wave({5, 64, 1, 1}, 0.5).to(torch::kFloat32) * 3;
  auto images = g->forward(z);
  check(has_sizes(images, {5, 1, 28, 28}), "noise [5, 64, 1, 1] -> images [5, 1, 28, 28]");
  check(images.abs().max().item<double>() < 1.0, "tanh output in (-1, 1)");
  images.mean().backward();
  bool grads = true;
  for (const auto& item : g->named_parameters())
    grads = grads && item.value().grad().defined() && item.value().grad().sizes() == item.value().sizes();
  check(grads, "every parameter gets a gradient of its shape");

  g->eval();
  torch::NoGradGuard no_grad;
  check(has_sizes(g->forward(z.narrow(0, 0, 1)), {1, 1, 28, 28}), "eval mode, batch of one");
}

void by_hand() {
  auto x = torch::tensor({1.0, 2.0, 3.0, 4.0}, torch::kFloat64).view({1, 1, 2, 2});
  auto w = torch::tensor({1.0, 10.0, 100.0, 1000.0}, torch::kFloat64).view({1, 1, 2, 2});
  // Stride 2 with a 2x2 kernel: each input value places x * w in its own 2x2 block.
  auto tiled = torch::conv_transpose2d(x, w, {}, 2);
  auto want = torch::tensor({1.0, 10.0, 2.0, 20.0, 100.0, 1000.0, 200.0, 2000.0,
                             3.0, 30.0, 4.0, 40.0, 300.0, 3000.0, 400.0, 4000.0}, torch::kFloat64).view({1, 1, 4, 4});
  check(close(tiled, want), "stride 2 tiles the kernel");
  // Stride 1: overlapping blocks add up.
  auto ones = torch::ones({1, 1, 2, 2}, torch::kFloat64);
  auto overlap = torch::conv_transpose2d(x, ones);
  check(close(overlap, torch::tensor({1.0, 3.0, 2.0, 4.0, 10.0, 6.0, 3.0, 7.0, 4.0}, torch::kFloat64).view({1, 1, 3, 3})),
        "stride 1 sums the overlapping blocks");
  // padding 1 crops a border, output_padding 1 gives back the last row and column; plus a bias.
  auto bias = torch::tensor({0.5}, torch::kFloat64);
  auto cropped = torch::conv_transpose2d(x, w, bias, 2, 1, 1);
  check(close(cropped, want.narrow(2, 1, 3).narrow(3, 1, 3) + 0.5), "padding and output_padding");
  auto as_float = torch::conv_transpose2d(x.to(torch::kFloat32), w.to(torch::kFloat32), bias.to(torch::kFloat32), 2, 1, 1);
  check(close(as_float, cropped), "float32 gives the same");
  auto one_d = torch::conv_transpose1d(torch::tensor({1.0, 2.0}, torch::kFloat64).view({1, 1, 2}),
                                       torch::tensor({1.0, -1.0, 3.0}, torch::kFloat64).view({1, 1, 3}), {}, 3);
  check(close(one_d, torch::tensor({1.0, -1.0, 3.0, 2.0, -2.0, 6.0}, torch::kFloat64).view({1, 1, 6})),
        "conv_transpose1d, stride 3 places the kernel side by side");
}

void against_conv2d() {
  // <conv_transpose2d(x, w), y> = <x, conv2d(y, w)>: the transposed convolution is the adjoint.
  torch::nn::ConvTranspose2d up(torch::nn::ConvTranspose2dOptions(4, 6, 3).stride(2).padding(1).output_padding(1).groups(2));
  up->to(torch::kFloat64);
  {
    torch::NoGradGuard no_grad;
    up->weight.copy_(wave({4, 3, 3, 3}, 0.0));
    up->bias.zero_();
  }
  check(has_sizes(up->weight, {4, 3, 3, 3}), "grouped weight [in, out / groups, k, k]");
  auto x = wave({2, 4, 5, 4}, 1.0);
  auto t = up->forward(x);
  check(has_sizes(t, {2, 6, 10, 8}), "(5 - 1) 2 - 2 + 3 + 1 = 10, (4 - 1) 2 - 2 + 3 + 1 = 8");
  auto y = wave({2, 6, 10, 8}, 2.0);
  auto c = torch::nn::functional::conv2d(
      y, up->weight, torch::nn::functional::Conv2dFuncOptions().stride(2).padding(1).groups(2));
  check(has_sizes(c, {2, 4, 5, 4}), "conv2d maps the output back to the input's shape");
  check(near(sum_of_products(t, y), sum_of_products(x, c), 1e-10), "conv_transpose2d is the adjoint of conv2d");

  // groups = 2 is two transposed convolutions on the channel halves, side by side.
  auto halves = torch::cat({torch::conv_transpose2d(x.narrow(1, 0, 2), up->weight.narrow(0, 0, 2), {}, 2, 1, 1),
                            torch::conv_transpose2d(x.narrow(1, 2, 2), up->weight.narrow(0, 2, 2), {}, 2, 1, 1)},
                           1);
  check(close(t, halves, 1e-12), "groups as per-group transposed convolutions");

  // output_size chooses the output_padding for this call.
  std::vector<int64_t> size{9, 7};
  check(has_sizes(up->forward(x, torch::IntArrayRef(size)), {2, 6, 9, 7}), "forward(x, output_size)");
  auto g = torch::nn::functional::conv_transpose2d(
      x, up->weight, torch::nn::functional::ConvTranspose2dFuncOptions().stride(2).padding(1).groups(2));
  check(close(up->forward(x, torch::IntArrayRef(size)), g), "output_size {9, 7} is output_padding 0");
}

void dropout2d() {
  torch::nn::Dropout2d drop(torch::nn::Dropout2dOptions(0.5));
  auto x = wave({6, 10, 3, 3}, 0.25).to(torch::kFloat32) + 1;  // no zeros of its own
  drop->eval();
  check(drop(x).equal(x), "eval mode: the identity");
  drop->train();
  auto y = drop(x);
  check(has_sizes(y, {6, 10, 3, 3}), "train mode keeps the shape");
  bool whole = true;
  int kept = 0;
  for (int64_t n = 0; n < 6; ++n)
    for (int64_t c = 0; c < 10; ++c) {
      auto a = x[n][c], b = y[n][c];
      bool zero = b.abs().max().item<double>() == 0.0;
      bool scaled = close(b, a * 2, 1e-6);
      whole = whole && (zero || scaled);
      kept += zero ? 0 : 1;
    }
  check(whole, "each channel is zeroed whole or scaled by 1 / (1 - p) whole");
  check(kept > 5 && kept < 55, "about half the 60 channels are kept");
}

}  // namespace

int main() {
  section("DCGAN-style generator", generator);
  section("transposed convolution by hand", by_hand);
  section("against conv2d and per-group", against_conv2d);
  section("Dropout2d", dropout2d);
  return finish("conv_transpose");
}
