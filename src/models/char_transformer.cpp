// The character-level transformer language model (see cohort/models/char_transformer.h).
#include "cohort/models/char_transformer.h"

#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "cohort/utils/checkpoint.h"

namespace cohort::models {

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
    // encoder(h, mask), one checkpoint per layer.
    for (size_t i = 0; i < encoder->layers->size(); ++i)
      h = utils::checkpoint(nn::TransformerEncoderLayer(encoder->layers->ptr<nn::TransformerEncoderLayerImpl>(i)), h,
                            mask);
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
