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

std::shared_ptr<Model> CharLSTM::create_fresh() const { return std::make_shared<CharLSTM>(options()); }

}  // namespace cohort::models
