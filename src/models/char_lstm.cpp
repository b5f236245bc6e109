// The character-level LSTM language model (see cohort/models/char_lstm.h).
#include "cohort/models/char_lstm.h"

#include "cohort/core/error.h"

namespace cohort::models {

CharLSTM::CharLSTM(const ModelOptions& options) : Model("char-lstm", options) {
  embedding = register_module("embedding", nn::Embedding(options.num_classes(), kEmbedding));
  lstm = register_module("lstm", nn::LSTM(nn::LSTMOptions(kEmbedding, kHidden).num_layers(kLayers).batch_first(true)));
  fc = register_module("fc", nn::Linear(kHidden, options.num_classes()));
}

Tensor CharLSTM::forward(const Tensor& x) {
  COHORT_CHECK(x.dim() == 2 && x.dtype() == kInt64, arch(), ": expected character indices int64 [N, T], got ",
               x.describe());
  Tensor out = std::get<0>(lstm->forward(embedding(x)));
  return fc(out.reshape({-1, kHidden}));
}

std::tuple<Tensor, Tensor, Tensor> CharLSTM::forward(const Tensor& x, const Tensor& h, const Tensor& c) {
  COHORT_CHECK(x.dim() == 2 && x.dtype() == kInt64, arch(), ": expected character indices int64 [N, T], got ",
               x.describe());
  const Shape want{x.size(0), kLayers, kHidden};
  COHORT_CHECK(h.defined() && c.defined() && h.sizes() == want && c.sizes() == want, arch(),
               ": expected states h and c of shape ", want, " (batch, layers, hidden) for input ", x.sizes(), ", got ",
               h.defined() ? h.sizes().vec() : Shape{}, " and ", c.defined() ? c.sizes().vec() : Shape{});
  auto [out, state] = lstm->forward(embedding(x), std::make_tuple(h.transpose(0, 1).contiguous(),
                                                                  c.transpose(0, 1).contiguous()));
  return {fc(out.reshape({-1, kHidden})), std::get<0>(state).transpose(0, 1), std::get<1>(state).transpose(0, 1)};
}

std::shared_ptr<Model> CharLSTM::create_fresh() const { return std::make_shared<CharLSTM>(options()); }

}  // namespace cohort::models
