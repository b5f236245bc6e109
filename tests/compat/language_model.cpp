// The libtorch-port promise for a sequence program in the style of PyTorch's word_language_model
// example, written against libtorch's C++ API: an Embedding -> 2-layer LSTM -> Linear model in a
// TORCH_MODULE, trained with truncated backpropagation through time (the hidden state carried from
// one window to the next and detached), gradient clipping and Adam; greedy generation; the model
// saved and loaded; then a causal TransformerEncoder and packed sequences of uneven lengths
// (compat.h has the rules). The random streams differ between the libraries, so training is checked
// by its outcome: a text that repeats a short phrase is learned nearly perfectly.
#include "compat.h"

#include <unistd.h>
#include <cstdio>
#include <string>

using namespace compat;

namespace {

const std::string kPhrase = "the cat sat on the mat. ";

struct CharLMImpl : torch::nn::Module {
  CharLMImpl(int64_t vocab, int64_t hidden)
      : embed(register_module("embed", torch::nn::Embedding(vocab, 16))),
        lstm(register_module("lstm", torch::nn::LSTM(torch::nn::LSTMOptions(16, hidden).num_layers(2).batch_first(true)))),
        head(register_module("head", torch::nn::Linear(hidden, vocab))) {}

  // x: int64 [B, T]; returns logits [B, T, vocab] and the new (h, c).
  std::tuple<torch::Tensor, std::tuple<torch::Tensor, torch::Tensor>> forward(
      torch::Tensor x, std::tuple<torch::Tensor, torch::Tensor> state) {
    auto out = lstm->forward(embed->forward(x), state);
    return {head->forward(std::get<0>(out)), std::get<1>(out)};
  }

  torch::nn::Embedding embed;
  torch::nn::LSTM lstm;
  torch::nn::Linear head;
};
TORCH_MODULE(CharLM);

// The distinct characters of the phrase, in order of first appearance.
std::string vocabulary() {
  std::string v;
  for (char c : kPhrase)
    if (v.find(c) == std::string::npos) v += c;
  return v;
}

torch::Tensor encode(const std::string& text, const std::string& vocab) {
  std::vector<int64_t> ids;
  for (char c : text) ids.push_back(static_cast<int64_t>(vocab.find(c)));
  return torch::tensor(ids, torch::kLong);
}

void language_model() {
  torch::manual_seed(0);
  const std::string vocab = vocabulary();
  const int64_t V = static_cast<int64_t>(vocab.size()), B = 4, T = 12, hidden = 48;
  std::string text;
  while (text.size() < 4000) text += kPhrase;
  // B contiguous streams: row b of window k continues row b of window k - 1.
  const int64_t per_stream = static_cast<int64_t>(text.size()) / B;
  torch::Tensor streams = encode(text.substr(0, static_cast<size_t>(per_stream * B)), vocab).view({B, per_stream});

  CharLM model(V, hidden);
  torch::optim::Adam optimizer(model->parameters(), torch::optim::AdamOptions(0.01));
  auto zero_state = [&] {
    return std::make_tuple(torch::zeros({2, B, hidden}), torch::zeros({2, B, hidden}));
  };
  double first_loss = -1, last_loss = 0;
  for (int epoch = 0; epoch < 3; ++epoch) {
    auto state = zero_state();
    for (int64_t start = 0; start + T + 1 <= per_stream; start += T) {
      torch::Tensor x = streams.narrow(1, start, T), y = streams.narrow(1, start + 1, T);
      // Truncated BPTT: the state flows forward, its gradient stops at the window's start.
      state = std::make_tuple(std::get<0>(state).detach(), std::get<1>(state).detach());
      optimizer.zero_grad();
      auto [logits, next] = model->forward(x, state);
      torch::Tensor loss = torch::nn::functional::cross_entropy(logits.reshape({-1, V}), y.reshape({-1}));
      loss.backward();
      torch::nn::utils::clip_grad_norm_(model->parameters(), 1.0);
      optimizer.step();
      state = next;
      if (first_loss < 0) first_loss = loss.item<double>();
      last_loss = loss.item<double>();
    }
  }
  check(first_loss > 2.0, "the untrained model is uncertain (loss " + std::to_string(first_loss) + ")");
  check(last_loss < 0.15, "the repeated phrase is learned (final loss " + std::to_string(last_loss) + ")");

  // Greedy generation, one character at a time with the state carried.
  auto generate = [&](CharLM& m) {
    torch::NoGradGuard no_grad;
    m->eval();
    std::string out = "the c";
    auto state = std::make_tuple(torch::zeros({2, 1, hidden}), torch::zeros({2, 1, hidden}));
    auto [logits, next] = m->forward(encode(out, vocab).unsqueeze(0), state);
    state = next;
    for (int i = 0; i < 40; ++i) {
      const int64_t id = logits.select(1, logits.size(1) - 1).argmax(-1).item<int64_t>();
      out += vocab[static_cast<size_t>(id)];
      std::tie(logits, state) = m->forward(torch::tensor({id}, torch::kLong).view({1, 1}), state);
    }
    return out;
  };
  const std::string generated = generate(model);
  check(generated.rfind("the cat sat on the mat. the cat sat on the", 0) == 0, "greedy text continues the phrase: '" +
                                                                              generated + "'");

  // Saved and loaded, the model generates the same text.
  const std::string path = "/tmp/compat-charlm-" + std::to_string(::getpid()) + ".pt";
  torch::save(model, path);
  CharLM loaded(V, hidden);
  torch::load(loaded, path);
  std::remove(path.c_str());
  check(generate(loaded) == generated, "the loaded model generates the same text");
  const auto params = model->named_parameters();
  check(params.contains("lstm.weight_ih_l0") && params.contains("lstm.bias_hh_l1") && params.contains("embed.weight"),
        "parameters are named as in PyTorch's state dicts");
  check(has_sizes(params["lstm.weight_hh_l1"], {4 * hidden, hidden}), "weight_hh_l1 is [4 * hidden, hidden]");
}

void causal_transformer() {
  torch::manual_seed(0);
  const int64_t d = 32, T = 6, B = 3;
  torch::nn::TransformerEncoder encoder(
      torch::nn::TransformerEncoderOptions(torch::nn::TransformerEncoderLayerOptions(d, 4).dim_feedforward(64).dropout(0.0),
                                           2));
  encoder->eval();
  const torch::Tensor mask = torch::nn::TransformerImpl::generate_square_subsequent_mask(T);
  check(has_sizes(mask, {T, T}), "the causal mask is [T, T]");
  check(std::isinf(mask[0][1].item<double>()) && mask[1][0].item<double>() == 0.0,
        "the causal mask hides later positions with -inf and shows earlier ones with 0");
  // Sequence-first input [T, B, d], libtorch's default layout.
  torch::Tensor x = torch::arange(T * B * d, torch::kFloat32).mul(0.013).sin().view({T, B, d});
  torch::Tensor y = encoder->forward(x, mask);
  check(has_sizes(y, {T, B, d}), "the encoder keeps [T, B, d]");
  // Causality: changing the last position leaves every earlier output as it was.
  torch::Tensor x2 = x.clone();
  x2[T - 1] = x2[T - 1] + 1.0;
  torch::Tensor y2 = encoder->forward(x2, mask);
  check(close(y.narrow(0, 0, T - 1), y2.narrow(0, 0, T - 1), 1e-5), "earlier outputs do not see later inputs");
  check(!close(y[T - 1], y2[T - 1], 1e-3), "the changed position's own output changes");
}

void packed_sequences() {
  torch::manual_seed(0);
  torch::nn::GRU gru(torch::nn::GRUOptions(3, 5).batch_first(true));
  // Three sequences of lengths 2, 4 and 3, padded with zeros, not sorted by length.
  torch::Tensor padded = torch::arange(3 * 4 * 3, torch::kFloat32).mul(0.1).cos().view({3, 4, 3});
  const torch::Tensor lengths = torch::tensor({2, 4, 3}, torch::kLong);
  for (int64_t b = 0; b < 3; ++b) {
    const int64_t n = lengths[b].item<int64_t>();
    if (n < 4) padded[b].narrow(0, n, 4 - n).zero_();
  }
  auto packed = torch::nn::utils::rnn::pack_padded_sequence(padded, lengths, /*batch_first=*/true,
                                                            /*enforce_sorted=*/false);
  auto [packed_out, h_n] = gru->forward_with_packed_input(packed);
  auto [out, out_lengths] = torch::nn::utils::rnn::pad_packed_sequence(packed_out, /*batch_first=*/true);
  check(has_sizes(out, {3, 4, 5}), "pad_packed_sequence gives [B, longest, hidden]");
  check(out_lengths.equal(lengths), "the lengths come back in the input's order");
  check(out[0].narrow(0, 2, 2).abs().max().item<double>() == 0.0, "positions past a sequence's end are padding");
  // Each sequence alone through the same GRU gives the same outputs and final state.
  for (int64_t b = 0; b < 3; ++b) {
    const int64_t n = lengths[b].item<int64_t>();
    auto [alone, h_alone] = gru->forward(padded[b].narrow(0, 0, n).unsqueeze(0));
    check(close(out[b].narrow(0, 0, n), alone[0], 1e-5), "sequence " + std::to_string(b) + " equals its own run");
    check(close(h_n.select(1, b), h_alone.select(1, 0), 1e-5), "final state " + std::to_string(b) + " equals its own run");
  }
}

}  // namespace

int main() {
  section("language model", language_model);
  section("causal transformer", causal_transformer);
  section("packed sequences", packed_sequences);
  return finish("language_model");
}
