// A sequence-to-sequence nn::Transformer in the style of the community's libtorch translation
// tutorials: token embeddings plus learned positions, the encoder-decoder Transformer with the
// decoder's causal mask (Transformer::generate_square_subsequent_mask), teacher forcing with the
// target shifted right behind a start token, and greedy decoding one token at a time. The task is to
// reverse a sequence of digits. The random streams differ between the libraries (compat.h): the check
// is the outcome, and TransformerDecoderLayer/TransformerDecoder are checked for their shapes.
#include "compat.h"

#include <limits>

using namespace compat;
namespace nn = torch::nn;

namespace {

constexpr int64_t kDigits = 6, kStart = kDigits, kVocab = kDigits + 1, kLen = 5, kModel = 32;

struct ReverserImpl : nn::Module {
  ReverserImpl()
      : embed(register_module("embed", nn::Embedding(kVocab, kModel))),
        position(register_parameter("position", torch::randn({kLen, 1, kModel}) * 0.1)),
        transformer(register_module("transformer", nn::Transformer(nn::TransformerOptions(kModel, 4, 2, 2)
                                                                        .dim_feedforward(64)
                                                                        .dropout(0.0)))),
        head(register_module("head", nn::Linear(kModel, kDigits))) {}

  // src, tgt: int64 [T, N] (time-major, as libtorch's Transformer). Returns logits [T, N, digits].
  torch::Tensor forward(const torch::Tensor& src, const torch::Tensor& tgt) {
    auto x = embed(src) + position.slice(0, 0, src.size(0));
    auto y = embed(tgt) + position.slice(0, 0, tgt.size(0));
    auto mask = nn::TransformerImpl::generate_square_subsequent_mask(tgt.size(0));
    return head(transformer->forward(x, y, /*src_mask=*/torch::Tensor(), /*tgt_mask=*/mask));
  }

  nn::Embedding embed;
  torch::Tensor position;
  nn::Transformer transformer;
  nn::Linear head;
};
TORCH_MODULE(Reverser);

// Batch of sequences [kLen, N] from a fixed pattern, and their reversals.
std::pair<torch::Tensor, torch::Tensor> batch(int64_t n, int64_t offset) {
  auto src = (torch::arange(kLen).unsqueeze(1) * 7 + torch::arange(n).unsqueeze(0) * 5 + offset).remainder(kDigits);
  return {src, src.flip({0})};
}

torch::Tensor shifted_right(const torch::Tensor& target) {
  return torch::cat({torch::full({1, target.size(1)}, kStart, torch::kLong), target.slice(0, 0, kLen - 1)});
}

void reverse_digits() {
  torch::manual_seed(0);
  Reverser model;
  torch::optim::Adam adam(model->parameters(), torch::optim::AdamOptions(2e-3));
  for (int step = 0; step < 300; ++step) {
    auto [src, target] = batch(32, step);
    auto logits = model->forward(src, shifted_right(target));
    auto loss = torch::nn::functional::cross_entropy(logits.view({-1, kDigits}), target.reshape({-1}));
    adam.zero_grad();
    loss.backward();
    adam.step();
  }
  model->eval();
  torch::NoGradGuard no_grad;
  auto [src, target] = batch(16, 1000);
  auto decoded = torch::full({1, 16}, kStart, torch::kLong);
  for (int64_t t = 0; t < kLen; ++t) {
    auto next = model->forward(src, decoded).select(0, t).argmax(-1).unsqueeze(0);
    decoded = torch::cat({decoded, next});
  }
  const double accuracy = decoded.slice(0, 1).eq(target).to(torch::kFloat64).mean().item<double>();
  check(accuracy > 0.9, "greedy decoding reverses the sequences (accuracy " + std::to_string(accuracy) + ")");
}

void decoder_shapes() {
  nn::TransformerDecoderLayer layer(nn::TransformerDecoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.0));
  nn::TransformerDecoder decoder(nn::TransformerDecoderOptions(layer, 2));
  auto tgt = torch::ones({3, 2, 8}), memory = torch::ones({5, 2, 8});
  check(has_sizes(layer(tgt, memory), {3, 2, 8}), "TransformerDecoderLayer keeps tgt's shape");
  check(has_sizes(decoder(tgt, memory, nn::TransformerImpl::generate_square_subsequent_mask(3)), {3, 2, 8}),
        "TransformerDecoder with a causal mask");
  check(decoder->named_parameters().contains("layers.1.multihead_attn.in_proj_weight"),
        "the decoder's parameters are named as libtorch's");
  auto mask = nn::TransformerImpl::generate_square_subsequent_mask(3);
  check(mask[0][1].item<float>() == -std::numeric_limits<float>::infinity() && mask[1][0].item<float>() == 0,
        "the causal mask is -inf above the diagonal");
}

}  // namespace

int main() {
  section("reverse digits", reverse_digits);
  section("decoder shapes", decoder_shapes);
  return finish("seq2seq_transformer");
}
