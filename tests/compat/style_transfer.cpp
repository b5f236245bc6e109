// Neural style transfer in the style of the libtorch tutorials that port Gatys et al.: a hand-written
// VGG-like feature extractor (nn::Sequential walked layer by layer to take the activations it needs),
// Gram matrices for the style, the content image's activations as the content target, and the
// picture itself optimised with LBFGS (strong-Wolfe line search) under a closure, its pixels clamped
// to [0, 1] between steps; then the feed-forward transformer network of fast style transfer
// (ReflectionPad2d, InstanceNorm2d, Upsample, residual blocks) trained a few steps with Adam. The
// random streams differ between the libraries (compat.h): checks are shapes, hand-computed Gram
// values and outcomes (the losses fall).
#include "compat.h"

#include <algorithm>

using namespace compat;
namespace nn = torch::nn;
namespace F = torch::nn::functional;

namespace {

nn::Sequential vgg_features() {
  auto conv = [](int64_t in, int64_t out) { return nn::Conv2d(nn::Conv2dOptions(in, out, 3).padding(1)); };
  return nn::Sequential(conv(3, 8), nn::ReLU(), conv(8, 8), nn::ReLU(), nn::MaxPool2d(2), conv(8, 16), nn::ReLU(),
                        conv(16, 16), nn::ReLU());
}

// Activations after the ReLUs at `taps` (indices into the Sequential).
std::vector<torch::Tensor> features(nn::Sequential& vgg, torch::Tensor x, const std::vector<size_t>& taps) {
  std::vector<torch::Tensor> out;
  size_t i = 0;
  for (auto& layer : *vgg) {
    x = layer.forward(x);
    if (std::find(taps.begin(), taps.end(), i) != taps.end()) out.push_back(x);
    ++i;
  }
  return out;
}

torch::Tensor gram(const torch::Tensor& f) {
  auto sizes = f.sizes();
  auto flat = f.view({sizes[0], sizes[1], sizes[2] * sizes[3]});
  return torch::bmm(flat, flat.transpose(1, 2)).div(sizes[1] * sizes[2] * sizes[3]);
}

// Vertical stripes of the given period, in [0.2, 0.8]: inside the pixel range, so that the clamp
// between LBFGS steps does not undo them.
torch::Tensor stripes(int64_t period) {
  auto x = torch::arange(16, torch::kFloat32).remainder(period).lt(period / 2).to(torch::kFloat32) * 0.6 + 0.2;
  return x.view({1, 1, 1, 16}).expand({1, 3, 16, 16}).contiguous();
}

void gram_values() {
  // One channel [1, 1, 1, 2] of (1, 2) and one of (3, 4): G = [[5, 11], [11, 25]] / 4.
  auto f = torch::tensor({1.0, 2.0, 3.0, 4.0}).view({1, 2, 1, 2});
  check(close(gram(f), torch::tensor({5.0, 11.0, 11.0, 25.0}).view({1, 2, 2}) / 4, 1e-6), "a Gram matrix by hand");
}

void gatys() {
  torch::manual_seed(0);
  auto vgg = vgg_features();
  vgg->eval();
  for (auto& p : vgg->parameters()) p.set_requires_grad(false);
  const std::vector<size_t> style_taps{1, 3, 6, 8}, content_taps{6};
  auto style = stripes(4), content = stripes(8).transpose(2, 3).contiguous();
  std::vector<torch::Tensor> style_grams;
  for (auto& f : features(vgg, style, style_taps)) style_grams.push_back(gram(f).detach());
  auto content_target = features(vgg, content, content_taps)[0].detach();

  auto picture = content.clone().requires_grad_(true);
  torch::optim::LBFGS optimizer({picture}, torch::optim::LBFGSOptions(1).max_iter(10).line_search_fn("strong_wolfe"));
  auto total_loss = [&] {
    auto style_features = features(vgg, picture, style_taps);
    auto loss = F::mse_loss(features(vgg, picture, content_taps)[0], content_target);
    for (size_t k = 0; k < style_features.size(); ++k) loss = loss + 1e3 * F::mse_loss(gram(style_features[k]), style_grams[k]);
    return loss;
  };
  const double first = total_loss().item<double>();
  for (int round = 0; round < 3; ++round) {
    optimizer.step([&] {
      optimizer.zero_grad();
      auto loss = total_loss();
      loss.backward();
      return loss;
    });
    torch::NoGradGuard no_grad;
    picture.clamp_(0, 1);
  }
  const double last = total_loss().item<double>();
  check(std::isfinite(last) && last < 0.5 * first,
        "LBFGS halves the style-transfer loss (" + std::to_string(first) + " -> " + std::to_string(last) + ")");
  check(picture.min().item<double>() >= 0 && picture.max().item<double>() <= 1, "the pixels stay in [0, 1]");
  check(!picture.grad().defined() || has_sizes(picture.grad(), {1, 3, 16, 16}), "the picture's gradient");
}

struct ConvLayerImpl : nn::Module {
  ConvLayerImpl(int64_t in, int64_t out, int64_t kernel, int64_t stride)
      : pad(register_module("pad", nn::ReflectionPad2d(kernel / 2))),
        conv(register_module("conv", nn::Conv2d(nn::Conv2dOptions(in, out, kernel).stride(stride)))) {}
  torch::Tensor forward(torch::Tensor x) { return conv(pad(x)); }
  nn::ReflectionPad2d pad;
  nn::Conv2d conv;
};
TORCH_MODULE(ConvLayer);

struct ResidualBlockImpl : nn::Module {
  explicit ResidualBlockImpl(int64_t channels)
      : conv1(register_module("conv1", ConvLayer(channels, channels, 3, 1))),
        in1(register_module("in1", nn::InstanceNorm2d(nn::InstanceNorm2dOptions(channels).affine(true)))),
        conv2(register_module("conv2", ConvLayer(channels, channels, 3, 1))),
        in2(register_module("in2", nn::InstanceNorm2d(nn::InstanceNorm2dOptions(channels).affine(true)))) {}
  torch::Tensor forward(torch::Tensor x) { return x + in2(conv2(torch::relu(in1(conv1(x))))); }
  ConvLayer conv1;
  nn::InstanceNorm2d in1;
  ConvLayer conv2;
  nn::InstanceNorm2d in2;
};
TORCH_MODULE(ResidualBlock);

struct TransformerNetImpl : nn::Module {
  TransformerNetImpl()
      : down(register_module("down", ConvLayer(3, 8, 3, 2))),
        norm(register_module("norm", nn::InstanceNorm2d(nn::InstanceNorm2dOptions(8).affine(true)))),
        res(register_module("res", ResidualBlock(8))),
        up(register_module("up", nn::Upsample(nn::UpsampleOptions().scale_factor(std::vector<double>{2, 2})
                                                   .mode(torch::kNearest)))),
        out(register_module("out", ConvLayer(8, 3, 3, 1))) {}
  torch::Tensor forward(torch::Tensor x) {
    return torch::sigmoid(out(up(res(torch::relu(norm(down(x)))))));
  }
  ConvLayer down;
  nn::InstanceNorm2d norm;
  ResidualBlock res;
  nn::Upsample up;
  ConvLayer out;
};
TORCH_MODULE(TransformerNet);

void fast_style() {
  torch::manual_seed(0);
  auto vgg = vgg_features();
  for (auto& p : vgg->parameters()) p.set_requires_grad(false);
  TransformerNet net;
  check(net->named_parameters().contains("res.in1.weight"), "nested modules register as libtorch names them");
  auto style_gram = gram(features(vgg, stripes(4), {3})[0]).detach();
  auto content = torch::cat({stripes(8), stripes(8).transpose(2, 3)});
  torch::optim::Adam adam(net->parameters(), torch::optim::AdamOptions(1e-2));
  double first = 0, last = 0;
  for (int step = 0; step < 30; ++step) {
    adam.zero_grad();
    auto styled = net(content);
    auto loss = 1e3 * F::mse_loss(gram(features(vgg, styled, {3})[0]), style_gram.expand({2, 8, 8}));
    loss.backward();
    adam.step();
    if (step == 0) first = loss.item<double>();
    last = loss.item<double>();
  }
  check(has_sizes(net(content), {2, 3, 16, 16}), "the transformer net keeps the image size");
  check(last < first, "the fast-style loss falls (" + std::to_string(first) + " -> " + std::to_string(last) + ")");
}

}  // namespace

int main() {
  section("Gram matrix", gram_values);
  section("Gatys with LBFGS", gatys);
  section("fast style transfer", fast_style);
  return finish("style_transfer");
}
