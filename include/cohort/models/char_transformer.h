// A character-level language model on self-attention ("char-transformer" in models::create): token
// and learned position embeddings, a causal pre-norm transformer encoder, a final layer norm and a
// linear layer to the next character's logits.
//   x int64 [N, T], T <= image_size (the longest window: the trainer's --seq-len)
//   -> embedding [N, T, 128] + position [T, 128] -> 2 encoder layers (4 heads, feed-forward 512,
//   GELU, no dropout, a causal mask so position t sees positions <= t) -> layer norm -> fc
//   -> logits [N * T, num_classes]
// As char-lstm: logits flattened over batch and time; num_classes is the vocabulary size.
//   auto lm = models::create("char-transformer", models::ModelOptions().num_classes(96).image_size(64));
#pragma once

#include "cohort/models/model.h"
#include "cohort/nn/embedding.h"
#include "cohort/nn/linear.h"
#include "cohort/nn/normalization.h"
#include "cohort/nn/transformer_encoder.h"

namespace cohort::models {

class CharTransformer : public Model {
 public:
  static constexpr int64_t kWidth = 128, kHeads = 4, kFeedForward = 512, kLayers = 2;
  explicit CharTransformer(const ModelOptions& options = ModelOptions().num_classes(96).image_size(64));
  // x int64 [N, T] with 1 <= T <= image_size -> [N * T, num_classes]. Throws for another shape or dtype.
  Tensor forward(const Tensor& x) override;
  std::shared_ptr<Model> create_fresh() const override;

  // Activation checkpointing by residual step: in training, each encoder layer's self-attention and
  // feed-forward steps run under utils::checkpoint, all but the last feed-forward (Note [Transformer
  // checkpoints]). Off by default; create_fresh and clones keep it.
  void set_checkpoint_activations(bool on) { checkpoint_activations_ = on; }
  bool checkpoint_activations() const { return checkpoint_activations_; }

  nn::Embedding embedding{nullptr}, position{nullptr};
  nn::TransformerEncoder encoder{nullptr};
  nn::LayerNorm norm{nullptr};
  nn::Linear fc{nullptr};

 private:
  bool checkpoint_activations_ = false;
};

}  // namespace cohort::models
