// A variational autoencoder in the style of PyTorch's VAE example, written against libtorch's C++
// API: fc1 -> (fc21, fc22) for the mean and log-variance, the reparameterisation with randn_like,
// fc3 -> fc4 -> sigmoid to decode, and the loss as the example writes it (binary cross-entropy
// summed, plus the KL divergence -0.5 sum(1 + logvar - mu^2 - exp(logvar))), trained with Adam.
// The random streams differ between the libraries (compat.h): training is checked by its outcome on
// a small set of bar images, and the pieces of the loss by hand-computed values.
#include "compat.h"

using namespace compat;
namespace F = torch::nn::functional;

namespace {

struct VAEImpl : torch::nn::Module {
  VAEImpl()
      : fc1(register_module("fc1", torch::nn::Linear(64, 32))),
        fc21(register_module("fc21", torch::nn::Linear(32, 4))),
        fc22(register_module("fc22", torch::nn::Linear(32, 4))),
        fc3(register_module("fc3", torch::nn::Linear(4, 32))),
        fc4(register_module("fc4", torch::nn::Linear(32, 64))) {}

  std::pair<torch::Tensor, torch::Tensor> encode(const torch::Tensor& x) {
    auto h = torch::relu(fc1->forward(x));
    return {fc21->forward(h), fc22->forward(h)};
  }
  torch::Tensor reparameterize(const torch::Tensor& mu, const torch::Tensor& logvar) {
    if (!is_training()) return mu;
    auto std = torch::exp(0.5 * logvar);
    auto eps = torch::randn_like(std);
    return mu + eps * std;
  }
  torch::Tensor decode(const torch::Tensor& z) { return torch::sigmoid(fc4->forward(torch::relu(fc3->forward(z)))); }
  std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> forward(const torch::Tensor& x) {
    auto [mu, logvar] = encode(x.view({-1, 64}));
    return {decode(reparameterize(mu, logvar)), mu, logvar};
  }

  torch::nn::Linear fc1, fc21, fc22, fc3, fc4;
};
TORCH_MODULE(VAE);

torch::Tensor loss_function(const torch::Tensor& recon, const torch::Tensor& x, const torch::Tensor& mu,
                            const torch::Tensor& logvar) {
  auto bce = F::binary_cross_entropy(recon, x.view({-1, 64}), F::BinaryCrossEntropyFuncOptions().reduction(torch::kSum));
  auto kld = -0.5 * torch::sum(1 + logvar - mu.pow(2) - logvar.exp());
  return bce + kld;
}

// Eight 8x8 images in {0, 1}: a bar at row k.
torch::Tensor bars() {
  auto images = torch::zeros({8, 1, 8, 8});
  for (int64_t k = 0; k < 8; ++k) images.index_put_({k, 0, k}, 1.0);
  return images;
}

void loss_pieces() {
  // At mu = 0, logvar = 0 the KL term is 0; a reconstruction of 0.5 everywhere costs 64 log 2 per image.
  auto x = bars().slice(0, 0, 2);
  auto recon = torch::full({2, 64}, 0.5);
  auto zeros = torch::zeros({2, 4});
  check(near(loss_function(recon, x, zeros, zeros).item<double>(), 2 * 64 * std::log(2.0), 1e-5),
        "BCE(sum) of 0.5 is 64 log 2 per image, KL(N(0, 1) || N(0, 1)) is 0");
  auto mu = torch::ones({1, 4}), logvar = torch::zeros({1, 4});
  check(near(loss_function(torch::full({1, 64}, 0.5), x.slice(0, 0, 1), mu, logvar).item<double>(),
             64 * std::log(2.0) + 0.5 * 4, 1e-5),
        "KL of a unit shift in 4 dims is 2");
}

void training() {
  torch::manual_seed(0);
  VAE model;
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(1e-2));
  auto data = bars();
  model->train();
  double first = 0, last = 0;
  for (int epoch = 0; epoch < 300; ++epoch) {
    optimizer.zero_grad();
    auto [recon, mu, logvar] = model->forward(data);
    auto loss = loss_function(recon, data, mu, logvar);
    loss.backward();
    optimizer.step();
    if (epoch == 0) first = loss.item<double>();
    last = loss.item<double>();
  }
  check(std::isfinite(last) && last < 0.5 * first,
        "training halves the VAE's loss (" + std::to_string(first) + " -> " + std::to_string(last) + ")");

  model->eval();
  torch::NoGradGuard no_grad;
  auto [recon, mu, logvar] = model->forward(data);
  check(has_sizes(recon, {8, 64}) && has_sizes(mu, {8, 4}) && has_sizes(logvar, {8, 4}), "the VAE's shapes");
  // Each bar is reconstructed: its row is the brightest of the image.
  auto rows = recon.view({8, 8, 8}).sum(2).argmax(1);
  check(torch::equal(rows, torch::arange(8)), "each bar comes back on its own row");
  auto sample = model->decode(torch::randn({5, 4}));
  check(has_sizes(sample, {5, 64}) && sample.min().item<double>() >= 0 && sample.max().item<double>() <= 1,
        "decoded samples are probabilities");
}

}  // namespace

int main() {
  section("loss pieces", loss_pieces);
  section("training", training);
  return finish("vae");
}
