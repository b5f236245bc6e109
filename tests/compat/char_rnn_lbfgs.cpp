// A char-RNN in the style of the community's libtorch tutorials: an Embedding -> GRU -> Linear model
// trained on a repeated phrase with Adam and gradient clipping; then its readout refitted from scratch
// by LBFGS with a strong-Wolfe line search on the GRU's hidden states (computed once, without a
// graph), as people fit a linear probe. The random streams differ between the libraries (compat.h):
// the checks are outcomes (the phrase's next characters are predicted) and LBFGS's own contract (the
// loss never rises across its steps).
#include "compat.h"

#include <string>

using namespace compat;
namespace nn = torch::nn;
namespace F = torch::nn::functional;

namespace {

const std::string kPhrase = "the cat sat on the mat. ";

struct CharRNNImpl : nn::Module {
  CharRNNImpl(int64_t vocab, int64_t hidden)
      : embed(register_module("embed", nn::Embedding(vocab, 8))),
        gru(register_module("gru", nn::GRU(nn::GRUOptions(8, hidden).batch_first(true)))),
        readout(register_module("readout", nn::Linear(hidden, vocab))) {}
  torch::Tensor hidden_states(const torch::Tensor& ids) { return std::get<0>(gru(embed(ids))); }
  torch::Tensor forward(const torch::Tensor& ids) { return readout(hidden_states(ids)); }
  nn::Embedding embed;
  nn::GRU gru;
  nn::Linear readout;
};
TORCH_MODULE(CharRNN);

double accuracy(const torch::Tensor& logits, const torch::Tensor& targets) {
  return logits.argmax(-1).eq(targets).to(torch::kFloat64).mean().item<double>();
}

void char_rnn() {
  torch::manual_seed(0);
  std::string vocab;
  for (char c : kPhrase)
    if (vocab.find(c) == std::string::npos) vocab += c;
  const auto V = static_cast<int64_t>(vocab.size());
  std::string text;
  while (text.size() < 8 * kPhrase.size() + 1) text += kPhrase;
  std::vector<int64_t> ids;
  for (char c : text) ids.push_back(static_cast<int64_t>(vocab.find(c)));
  auto all = torch::tensor(ids, torch::kLong);
  // Four sequences of 48 characters, each target the next character.
  const int64_t B = 4, T = 48;
  auto inputs = all.slice(0, 0, B * T).view({B, T});
  auto targets = all.slice(0, 1, B * T + 1).view({B, T});

  CharRNN model(V, 32);
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(2e-2));
  for (int step = 0; step < 150; ++step) {
    adam.zero_grad();
    auto loss = F::cross_entropy(model->forward(inputs).view({-1, V}), targets.view({-1}));
    loss.backward();
    nn::utils::clip_grad_norm_(model->parameters(), 1.0);
    adam.step();
  }
  // Skip the first characters of each row: the GRU has not yet seen enough to place itself.
  auto trained = model->forward(inputs).slice(1, 8);
  check(accuracy(trained, targets.slice(1, 8)) > 0.9, "Adam trains the char-RNN");

  // The readout refitted by LBFGS on fixed features.
  torch::Tensor features;
  {
    torch::NoGradGuard no_grad;
    features = model->hidden_states(inputs).slice(1, 8).reshape({-1, 32});
  }
  auto labels = targets.slice(1, 8).reshape({-1});
  nn::Linear probe(32, V);
  torch::optim::LBFGS lbfgs(probe->parameters(),
                            torch::optim::LBFGSOptions(1).max_iter(25).history_size(10).line_search_fn("strong_wolfe"));
  auto closure = [&] {
    lbfgs.zero_grad();
    auto loss = F::cross_entropy(probe(features), labels);
    loss.backward();
    return loss;
  };
  double previous = F::cross_entropy(probe(features), labels).item<double>();
  const double first = previous;
  bool never_rises = true;
  for (int step = 0; step < 4; ++step) {
    lbfgs.step(closure);
    const double now = F::cross_entropy(probe(features), labels).item<double>();
    never_rises = never_rises && now <= previous + 1e-9;
    previous = now;
  }
  check(never_rises, "LBFGS with strong-Wolfe line search never raises the loss");
  check(previous < 0.2 * first, "LBFGS fits the readout (" + std::to_string(first) + " -> " + std::to_string(previous) + ")");
  torch::NoGradGuard no_grad;
  check(accuracy(probe(features), labels) > 0.9, "the refitted readout predicts the next characters");
}

}  // namespace

int main() {
  section("char-RNN with an LBFGS readout", char_rnn);
  return finish("char_rnn_lbfgs");
}
