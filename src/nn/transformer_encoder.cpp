// Transformer encoder layers composed of MultiheadAttention, Linear, LayerNorm and Dropout, and their stack.
#include "cohort/nn/transformer_encoder.h"

#include "cohort/nn/functional/activation.h"
#include "cohort/ops/activation.h"
#include "cohort/ops/pointwise.h"
#include "transformer_parts.h"

namespace cohort::nn {

TransformerEncoderLayerImpl::TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options_)
    : options(options_) {
  reset();
}

void TransformerEncoderLayerImpl::reset() {
  const auto& o = options;
  COHORT_CHECK(o.dim_feedforward() > 0, "TransformerEncoderLayer: dim_feedforward must be positive, got ",
               o.dim_feedforward());
  self_attn = register_module(
      "self_attn", MultiheadAttention(MultiheadAttentionOptions(o.d_model(), o.nhead()).dropout(o.dropout()).batch_first(
                       o.batch_first())));
  linear1 = register_module("linear1", Linear(o.d_model(), o.dim_feedforward()));
  dropout = register_module("dropout", Dropout(o.dropout()));
  linear2 = register_module("linear2", Linear(o.dim_feedforward(), o.d_model()));
  norm1 = register_module("norm1", LayerNorm(LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps())));
  norm2 = register_module("norm2", LayerNorm(LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps())));
  dropout1 = register_module("dropout1", Dropout(o.dropout()));
  dropout2 = register_module("dropout2", Dropout(o.dropout()));
}

void TransformerEncoderLayerImpl::reset_parameters() {
  self_attn->_reset_parameters();
  linear1->reset_parameters();
  linear2->reset_parameters();
  norm1->reset_parameters();
  norm2->reset_parameters();
}

Tensor TransformerEncoderLayerImpl::activation(const Tensor& x) { return detail::activate(options.activation(), x); }

Tensor TransformerEncoderLayerImpl::forward(const Tensor& src, const Tensor& src_mask,
                                            const Tensor& src_key_padding_mask) {
  return feed_forward_step(self_attention_step(src, src_mask, src_key_padding_mask));
}

Tensor TransformerEncoderLayerImpl::self_attention_step(const Tensor& x, const Tensor& src_mask,
                                                        const Tensor& src_key_padding_mask) {
  auto attend = [&](const Tensor& y) {
    return dropout1(std::get<0>(self_attn(y, y, y, src_key_padding_mask, /*need_weights=*/false, src_mask)));
  };
  return options.norm_first() ? x + attend(norm1(x)) : norm1(x + attend(x));
}

Tensor TransformerEncoderLayerImpl::feed_forward_step(const Tensor& x) {
  auto feed_forward = [&](const Tensor& y) { return dropout2(linear2(dropout(activation(linear1(y))))); };
  return options.norm_first() ? x + feed_forward(norm2(x)) : norm2(x + feed_forward(x));
}

TransformerEncoderImpl::TransformerEncoderImpl(TransformerEncoderOptions options_) : options(std::move(options_)) {
  reset();
}

void TransformerEncoderImpl::reset() {
  COHORT_CHECK(!options.encoder_layer().is_empty(), "TransformerEncoder: the encoder_layer is empty (nullptr)");
  layers = detail::stack_copies(*this, "TransformerEncoder", options.encoder_layer().ptr(), options.num_layers());
  norm = detail::copy_norm(*this, options.norm());
}

void TransformerEncoderImpl::reset_parameters() {
  for (size_t i = 0; i < layers->size(); ++i) layers->ptr<TransformerEncoderLayerImpl>(i)->reset_parameters();
}

Tensor TransformerEncoderImpl::forward(const Tensor& src, const Tensor& src_mask, const Tensor& src_key_padding_mask) {
  Tensor x = src;
  for (size_t i = 0; i < layers->size(); ++i)
    x = layers->ptr<TransformerEncoderLayerImpl>(i)->forward(x, src_mask, src_key_padding_mask);
  return norm ? norm->forward(x) : x;
}

}  // namespace cohort::nn
