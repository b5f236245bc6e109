// The character-level transformer language model (see cohort/models/char_transformer.h).
#include "cohort/models/char_transformer.h"

#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "cohort/utils/checkpoint.h"

namespace cohort::models {

namespace {

// Note [Transformer checkpoints]
// With checkpointing, each residual step of every encoder layer (self-attention with its norm, then
// the feed-forward with its norm) runs under a checkpoint of its own, all but the last layer's
// feed-forward, whose activations backward needs at once. Between forward and backward only the
// steps' inputs stay; backward recomputes one step at a time. By step rather than by layer: a layer's
// recompute holds its attention's [N, heads, T, T] scores and probabilities beside its feed-forward's
// [N * T, 512] activations, and with two layers that is most of the unchecked peak. Each step is a
// module of its own (sharing the layer's submodules) so that utils::checkpoint sees the parameters it
// uses.
class AttentionStep : public nn::Module {
 public:
  explicit AttentionStep(std::shared_ptr<nn::TransformerEncoderLayerImpl> layer) : layer_(std::move(layer)) {
    register_module("norm1", layer_->norm1);
    register_module("self_attn", layer_->self_attn);
  }
  Tensor forward(const Tensor& x, const Tensor& mask) { return layer_->self_attention_step(x, mask); }

 private:
  std::shared_ptr<nn::TransformerEncoderLayerImpl> layer_;
};

class FeedForwardStep : public nn::Module {
 public:
  explicit FeedForwardStep(std::shared_ptr<nn::TransformerEncoderLayerImpl> layer) : layer_(std::move(layer)) {
    register_module("norm2", layer_->norm2);
    register_module("linear1", layer_->linear1);
    register_module("linear2", layer_->linear2);
  }
  Tensor forward(const Tensor& x) { return layer_->feed_forward_step(x); }

 private:
  std::shared_ptr<nn::TransformerEncoderLayerImpl> layer_;
};

}  // namespace

CharTransformer::CharTransformer(const ModelOptions& options) : Model("char-transformer", options) {
  embedding = register_module("embedding", nn::Embedding(options.num_classes(), kWidth));
  position = register_module("position", nn::Embedding(options.image_size(), kWidth));
  // Pre-norm layers train stably without a warm-up; the vocabulary is small, so no dropout.
  const auto layer = nn::TransformerEncoderLayerOptions(kWidth, kHeads)
                         .dim_feedforward(kFeedForward)
                         .dropout(0.0)
                         .activation(kGELU)
                         .batch_first(true)
                         .norm_first(true);
  encoder = register_module("encoder", nn::TransformerEncoder(nn::TransformerEncoderOptions(layer, kLayers)));
  norm = register_module("norm", nn::LayerNorm(nn::LayerNormOptions({kWidth})));
  fc = register_module("fc", nn::Linear(kWidth, options.num_classes()));
}

Tensor CharTransformer::forward(const Tensor& x) {
  COHORT_CHECK(x.dim() == 2 && x.dtype() == kInt64 && x.size(1) >= 1 && x.size(1) <= options().image_size(), arch(),
               ": expected character indices int64 [N, T] with 1 <= T <= ", options().image_size(), ", got ",
               x.describe());
  const int64_t t = x.size(1);
  Tensor h = embedding(x) + position(arange(t, TensorOptions(kInt64).device(x.device())));
  const Tensor mask = nn::generate_square_subsequent_mask(t, TensorOptions(h.dtype()).device(x.device()));
  if (checkpoint_activations_ && is_training()) {
    // encoder(h, mask), one checkpoint per residual step (Note [Transformer checkpoints]).
    const size_t layers = encoder->layers->size();
    for (size_t i = 0; i < layers; ++i) {
      const auto layer = encoder->layers->ptr<nn::TransformerEncoderLayerImpl>(i);
      h = utils::checkpoint(std::make_shared<AttentionStep>(layer), h, mask);
      h = i + 1 < layers ? utils::checkpoint(std::make_shared<FeedForwardStep>(layer), h) : layer->feed_forward_step(h);
    }
    if (encoder->norm) h = encoder->norm->forward(h);
  } else {
    h = encoder(h, mask);
  }
  return fc(norm(h).reshape({-1, kWidth}));
}

std::shared_ptr<Model> CharTransformer::create_fresh() const {
  auto fresh = std::make_shared<CharTransformer>(options());
  fresh->set_checkpoint_activations(checkpoint_activations_);
  return fresh;
}

}  // namespace cohort::models
