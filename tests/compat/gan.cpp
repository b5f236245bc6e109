// A GAN in the style of libtorch's DCGAN example: a generator of transposed convolutions with batch
// norm and a convolutional discriminator with LeakyReLU, both nn::Sequential, trained with BCELoss
// and Adam (betas 0.5, 0.999), label smoothing on the real labels, the fakes detached for the
// discriminator's step; then the generator checkpointed and reloaded. The random streams differ
// between the libraries (compat.h), so the checks are properties and outcomes: shapes and ranges,
// finite losses, a discriminator that learns to tell the real images from noise, and a reloaded
// generator that draws what the saved one drew.
#include "compat.h"

#include <unistd.h>
#include <cstdio>
#include <string>

using namespace compat;
namespace nn = torch::nn;

namespace {

constexpr int64_t kNoise = 8;

// 8x8 "real" images in [-1, 1]: a bright horizontal bar on a dark ground, at row i % 8.
torch::Tensor real_batch(int64_t n, int64_t offset) {
  auto images = torch::full({n, 1, 8, 8}, -1.0);
  for (int64_t i = 0; i < n; ++i) images[i][0][(i + offset) % 8] = 1.0;
  return images;
}

nn::Sequential generator() {
  return nn::Sequential(nn::Linear(kNoise, 32 * 2 * 2), nn::Unflatten(nn::UnflattenOptions(1, {32, 2, 2})),
                        nn::ConvTranspose2d(nn::ConvTranspose2dOptions(32, 16, 4).stride(2).padding(1).bias(false)),
                        nn::BatchNorm2d(16), nn::ReLU(true),
                        nn::ConvTranspose2d(nn::ConvTranspose2dOptions(16, 1, 4).stride(2).padding(1).bias(false)),
                        nn::Tanh());
}

nn::Sequential discriminator() {
  return nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 16, 4).stride(2).padding(1).bias(false)),
                        nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)),
                        nn::Conv2d(nn::Conv2dOptions(16, 32, 4).stride(2).padding(1).bias(false)), nn::BatchNorm2d(32),
                        nn::LeakyReLU(nn::LeakyReLUOptions().negative_slope(0.2)), nn::Flatten(),
                        nn::Linear(32 * 2 * 2, 1), nn::Sigmoid());
}

// DCGAN's weight initialisation, written as its users write it: walk the modules by name.
void init_weights(nn::Module& module) {
  torch::NoGradGuard no_grad;
  for (auto& item : module.named_parameters()) {
    const std::string& name = item.key();
    if (name.find("weight") == std::string::npos) continue;
    bool is_batch_norm = false;
    for (auto& child : module.named_modules())
      if (child.value()->as<nn::BatchNorm2d>() && name.rfind(child.key() + ".", 0) == 0) is_batch_norm = true;
    if (is_batch_norm) nn::init::normal_(item.value(), 1.0, 0.02);
    else nn::init::normal_(item.value(), 0.0, 0.02);
  }
}

void train() {
  torch::manual_seed(1);
  auto G = generator();
  auto D = discriminator();
  init_weights(*G);
  init_weights(*D);
  torch::optim::Adam g_opt(G->parameters(), torch::optim::AdamOptions(2e-3).betas(std::make_tuple(0.5, 0.999)));
  torch::optim::Adam d_opt(D->parameters(), torch::optim::AdamOptions(2e-3).betas(std::make_tuple(0.5, 0.999)));
  nn::BCELoss bce;
  const int64_t N = 16;
  bool finite = true;
  for (int64_t step = 0; step < 40; ++step) {
    auto real = real_batch(N, step);
    // Discriminator: real images towards 0.9 (label smoothing), fakes towards 0.
    D->zero_grad();
    auto d_real = D->forward(real);
    auto d_loss_real = bce(d_real, torch::empty({N, 1}).fill_(0.9));
    auto noise = torch::randn({N, kNoise});
    auto fake = G->forward(noise);
    auto d_loss_fake = bce(D->forward(fake.detach()), torch::zeros({N, 1}));
    auto d_loss = d_loss_real + d_loss_fake;
    d_loss.backward();
    d_opt.step();
    // Generator: make the discriminator say "real".
    G->zero_grad();
    auto g_loss = bce(D->forward(fake), torch::ones({N, 1}));
    g_loss.backward();
    g_opt.step();
    finite = finite && std::isfinite(d_loss.item<double>()) && std::isfinite(g_loss.item<double>());
  }
  check(finite, "the GAN's losses stay finite");

  G->eval();
  D->eval();
  torch::NoGradGuard no_grad;
  auto samples = G->forward(torch::randn({4, kNoise}));
  check(has_sizes(samples, {4, 1, 8, 8}), "the generator draws [4, 1, 8, 8]");
  check(samples.min().item<double>() >= -1 && samples.max().item<double>() <= 1, "tanh keeps samples in [-1, 1]");
  auto verdict = D->forward(samples);
  check(has_sizes(verdict, {4, 1}) && verdict.min().item<double>() > 0 && verdict.max().item<double>() < 1,
        "the discriminator says a probability per image");

  // The generator saved and loaded draws the same images from the same noise.
  char path[] = "/tmp/compat-gan-XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  torch::save(G, path);
  auto G2 = generator();
  torch::load(G2, path);
  std::remove(path);
  G2->eval();
  auto noise = torch::randn({3, kNoise});
  check(close(G->forward(noise), G2->forward(noise), 1e-6), "a reloaded generator draws what the saved one drew");
}

// A discriminator alone learns the real bars from uniform noise: the outcome that does not depend on
// the random stream.
void discriminator_learns() {
  torch::manual_seed(2);
  auto D = discriminator();
  torch::optim::Adam opt(D->parameters(), torch::optim::AdamOptions(1e-2).betas(std::make_tuple(0.5, 0.999)));
  const int64_t N = 16;
  auto fakes = torch::rand({N, 1, 8, 8}) * 2 - 1;
  auto labels = torch::cat({torch::ones({N, 1}), torch::zeros({N, 1})});
  double loss_value = 0;
  for (int64_t step = 0; step < 60; ++step) {
    opt.zero_grad();
    auto loss = torch::nn::functional::binary_cross_entropy(D->forward(torch::cat({real_batch(N, step), fakes})),
                                                            labels);
    loss.backward();
    opt.step();
    loss_value = loss.item<double>();
  }
  check(loss_value < 0.1, "the discriminator separates real images from noise (loss " + std::to_string(loss_value) + ")");
}

}  // namespace

int main() {
  section("DCGAN training", train);
  section("discriminator learns", discriminator_learns);
  return finish("gan");
}
