// Image captioning in the style of the community's PyTorch tutorial ported to libtorch: a CNN encoder
// (convolutions, batch norm, adaptive average pooling, a linear embedding) and an LSTM decoder that
// reads the image feature as its first step, then the caption's word embeddings, packed by length
// with pack_padded_sequence; the loss on the packed outputs against the packed targets; greedy
// sampling that carries the LSTM state word by word. The random streams differ between the
// libraries (compat.h), so training is checked by its outcome: each image's caption, of its own
// length, is learned and sampled back.
#include "compat.h"

using namespace compat;
namespace nn = torch::nn;
namespace rnn_utils = torch::nn::utils::rnn;

namespace {

constexpr int64_t kStart = 0, kEnd = 1, kPad = 2, kVocab = 12, kEmbed = 16, kHidden = 32;

struct EncoderCNNImpl : nn::Module {
  EncoderCNNImpl()
      : conv(register_module("conv", nn::Sequential(nn::Conv2d(nn::Conv2dOptions(1, 8, 3).padding(1)),
                                                      nn::BatchNorm2d(8), nn::ReLU(), nn::MaxPool2d(2),
                                                      nn::Conv2d(nn::Conv2dOptions(8, 16, 3).padding(1)), nn::ReLU(),
                                                      nn::AdaptiveAvgPool2d(nn::AdaptiveAvgPool2dOptions({2, 2}))))),
        linear(register_module("linear", nn::Linear(16 * 2 * 2, kEmbed))),
        bn(register_module("bn", nn::BatchNorm1d(nn::BatchNorm1dOptions(kEmbed).momentum(0.01)))) {}
  torch::Tensor forward(torch::Tensor images) {
    auto f = conv->forward(images);
    return bn(linear(f.reshape({f.size(0), -1})));
  }
  nn::Sequential conv;
  nn::Linear linear;
  nn::BatchNorm1d bn;
};
TORCH_MODULE(EncoderCNN);

struct DecoderRNNImpl : nn::Module {
  DecoderRNNImpl()
      : embed(register_module("embed", nn::Embedding(kVocab, kEmbed))),
        lstm(register_module("lstm", nn::LSTM(nn::LSTMOptions(kEmbed, kHidden).batch_first(true)))),
        linear(register_module("linear", nn::Linear(kHidden, kVocab))) {}

  // features [N, E]; captions [N, T] padded; lengths sorted longest first (of the feature + words).
  torch::Tensor forward(const torch::Tensor& features, const torch::Tensor& captions, const torch::Tensor& lengths) {
    auto embeddings = torch::cat({features.unsqueeze(1), embed(captions)}, 1);
    auto packed = rnn_utils::pack_padded_sequence(embeddings, lengths, /*batch_first=*/true);
    auto [hiddens, state] = lstm->forward_with_packed_input(packed);
    return linear(hiddens.data());
  }

  std::vector<int64_t> sample(const torch::Tensor& feature, int64_t max_len = 8) {
    std::vector<int64_t> words;
    auto inputs = feature.unsqueeze(1);  // [1, 1, E]
    torch::optional<std::tuple<torch::Tensor, torch::Tensor>> state;
    for (int64_t t = 0; t < max_len; ++t) {
      auto [out, next] = lstm->forward(inputs, state);
      state = next;
      const int64_t word = linear(out.squeeze(1)).argmax(1).item<int64_t>();
      words.push_back(word);
      if (word == kEnd) break;
      inputs = embed(torch::tensor({word}, torch::kLong)).unsqueeze(1);
    }
    return words;
  }

  nn::Embedding embed;
  nn::LSTM lstm;
  nn::Linear linear;
};
TORCH_MODULE(DecoderRNN);

// Image k (8x8, one channel) is a bright square at a place of its own; its caption is the words
// 3 + k, ..., one word per k + 1, then <end>, so that the lengths differ.
torch::Tensor image(int64_t k) {
  auto img = torch::zeros({1, 8, 8});
  img.index_put_({0, torch::indexing::Slice(k, k + 3), torch::indexing::Slice(2 * (k % 3), 2 * (k % 3) + 3)}, 1.0);
  return img;
}
std::vector<int64_t> caption(int64_t k) {
  std::vector<int64_t> words;
  for (int64_t i = 0; i <= k; ++i) words.push_back(3 + (k + i) % (kVocab - 3));
  words.push_back(kEnd);
  return words;
}

void train_and_sample() {
  torch::manual_seed(0);
  const int64_t N = 4;  // images 3, 2, 1, 0: captions longest first, as pack_padded_sequence wants
  std::vector<torch::Tensor> images;
  std::vector<int64_t> lengths;
  auto captions = torch::full({N, N + 1}, kPad, torch::kLong);
  for (int64_t i = 0; i < N; ++i) {
    const int64_t k = N - 1 - i;
    images.push_back(image(k));
    auto words = caption(k);
    captions.index_put_({i, torch::indexing::Slice(0, static_cast<int64_t>(words.size()))}, torch::tensor(words));
    lengths.push_back(static_cast<int64_t>(words.size()));  // the feature step predicts the first word
  }
  auto batch = torch::stack(images);
  auto length_tensor = torch::tensor(lengths, torch::kLong);
  // The targets: the caption packed by the same lengths; the inputs: <start>-less words shifted by the feature.
  auto targets = rnn_utils::pack_padded_sequence(captions, length_tensor, true).data();
  auto inputs = captions.slice(1, 0, N);

  EncoderCNN encoder;
  DecoderRNN decoder;
  std::vector<torch::Tensor> params = decoder->parameters();
  for (auto& p : encoder->parameters()) params.push_back(p);
  torch::optim::Adam optimizer(params, torch::optim::AdamOptions(1e-2));
  nn::CrossEntropyLoss criterion;
  double first = 0, last = 0;
  for (int step = 0; step < 200; ++step) {
    auto outputs = decoder->forward(encoder->forward(batch), inputs, length_tensor);
    auto loss = criterion(outputs, targets);
    optimizer.zero_grad();
    loss.backward();
    optimizer.step();
    if (step == 0) first = loss.item<double>();
    last = loss.item<double>();
  }
  check(has_sizes(targets, {2 + 3 + 4 + 5}), "the packed targets hold every word of every caption");
  check(last < 0.1 * first, "training learns the captions (" + std::to_string(first) + " -> " + std::to_string(last) + ")");

  encoder->eval();
  torch::NoGradGuard no_grad;
  auto features = encoder->forward(batch);
  bool all = true;
  for (int64_t i = 0; i < N; ++i) all = all && decoder->sample(features[i].unsqueeze(0)) == caption(N - 1 - i);
  check(all, "greedy sampling gives each image its caption, of its own length");
}

}  // namespace

int main() {
  section("train and sample", train_and_sample);
  return finish("captioning");
}
