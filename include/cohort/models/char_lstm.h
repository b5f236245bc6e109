// A character-level language model ("char-lstm" in models::create): embedding, a 2-layer LSTM and
// a linear layer to the next character's logits.
//   x int64 [N, T] (character indices) -> embedding [N, T, 64] -> LSTM (2 layers, hidden 256,
//   batch_first) -> [N, T, 256] -> fc -> logits [N * T, vocab]
// The logits are flattened over batch and time, so the trainer's classification loss and accuracy
// count every position of every window (the target [N, T] flattens alike). ModelOptions:
// num_classes is the vocabulary size; in_channels and image_size are not used. forward(x) starts
// each window from a zero state; forward(x, h, c) continues from a given state and returns the
// final one, for training on consecutive windows of streams (data::CharStreams) with the state
// carried, detached, from one batch to the next (truncated backpropagation through time).
//   auto lm = models::create("char-lstm", models::ModelOptions().num_classes(96));
#pragma once

#include <tuple>

#include "cohort/models/model.h"
#include "cohort/nn/embedding.h"
#include "cohort/nn/linear.h"
#include "cohort/nn/rnn.h"

namespace cohort::models {

class CharLSTM : public Model {
 public:
  static constexpr int64_t kEmbedding = 64, kHidden = 256, kLayers = 2;
  explicit CharLSTM(const ModelOptions& options = ModelOptions().num_classes(96));
  // x int64 [N, T] -> [N * T, num_classes]. Throws for another shape or dtype.
  Tensor forward(const Tensor& x) override;
  // x int64 [N, T]; h, c [N, kLayers, kHidden] (batch first, so that DataParallel hands each replica
  // the states of its rows). Returns {logits [N * T, num_classes], h_n, c_n}, the states as h and c.
  std::tuple<Tensor, Tensor, Tensor> forward(const Tensor& x, const Tensor& h, const Tensor& c);
  std::shared_ptr<Model> create_fresh() const override;

  nn::Embedding embedding{nullptr};
  nn::LSTM lstm{nullptr};
  nn::Linear fc{nullptr};
};

}  // namespace cohort::models
