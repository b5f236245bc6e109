// Transformer decoder layers composed of MultiheadAttention, Linear, LayerNorm and Dropout, and their stack.
#include "cohort/nn/transformer_decoder.h"

#include "transformer_parts.h"

namespace cohort::nn {

TransformerDecoderLayerImpl::TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& options_)
    : options(options_) {
  reset();
}

void TransformerDecoderLayerImpl::reset() {
  const auto& o = options;
  COHORT_CHECK(o.dim_feedforward() > 0, "TransformerDecoderLayer: dim_feedforward must be positive, got ",
               o.dim_feedforward());
  auto attention = [&] {
    return MultiheadAttention(MultiheadAttentionOptions(o.d_model(), o.nhead()).dropout(o.dropout()).batch_first(
        o.batch_first()));
  };
  auto norm = [&] { return LayerNorm(LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps())); };
  self_attn = register_module("self_attn", attention());
  multihead_attn = register_module("multihead_attn", attention());
  linear1 = register_module("linear1", Linear(o.d_model(), o.dim_feedforward()));
  dropout = register_module("dropout", Dropout(o.dropout()));
  linear2 = register_module("linear2", Linear(o.dim_feedforward(), o.d_model()));
  norm1 = register_module("norm1", norm());
  norm2 = register_module("norm2", norm());
  norm3 = register_module("norm3", norm());
  dropout1 = register_module("dropout1", Dropout(o.dropout()));
  dropout2 = register_module("dropout2", Dropout(o.dropout()));
  dropout3 = register_module("dropout3", Dropout(o.dropout()));
}

void TransformerDecoderLayerImpl::reset_parameters() {
  self_attn->_reset_parameters();
  multihead_attn->_reset_parameters();
  linear1->reset_parameters();
  linear2->reset_parameters();
  norm1->reset_parameters();
  norm2->reset_parameters();
  norm3->reset_parameters();
}

Tensor TransformerDecoderLayerImpl::forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask,
                                            const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                                            const Tensor& memory_key_padding_mask) {
  auto self_attend = [&](const Tensor& x) {
    return dropout1(std::get<0>(self_attn(x, x, x, tgt_key_padding_mask, /*need_weights=*/false, tgt_mask)));
  };
  auto attend_memory = [&](const Tensor& x) {
    return dropout2(
        std::get<0>(multihead_attn(x, memory, memory, memory_key_padding_mask, /*need_weights=*/false, memory_mask)));
  };
  auto feed_forward = [&](const Tensor& x) {
    return dropout3(linear2(dropout(detail::activate(options.activation(), linear1(x)))));
  };
  Tensor x = tgt;
  if (options.norm_first()) {
    x = x + self_attend(norm1(x));
    x = x + attend_memory(norm2(x));
    return x + feed_forward(norm3(x));
  }
  x = norm1(x + self_attend(x));
  x = norm2(x + attend_memory(x));
  return norm3(x + feed_forward(x));
}

TransformerDecoderImpl::TransformerDecoderImpl(TransformerDecoderOptions options_) : options(std::move(options_)) {
  reset();
}

void TransformerDecoderImpl::reset() {
  COHORT_CHECK(!options.decoder_layer().is_empty(), "TransformerDecoder: the decoder_layer is empty (nullptr)");
  layers = detail::stack_copies(*this, "TransformerDecoder", options.decoder_layer().ptr(), options.num_layers());
  norm = detail::copy_norm(*this, options.norm());
}

void TransformerDecoderImpl::reset_parameters() {
  for (size_t i = 0; i < layers->size(); ++i) layers->ptr<TransformerDecoderLayerImpl>(i)->reset_parameters();
}

Tensor TransformerDecoderImpl::forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask,
                                       const Tensor& memory_mask, const Tensor& tgt_key_padding_mask,
                                       const Tensor& memory_key_padding_mask) {
  Tensor x = tgt;
  for (size_t i = 0; i < layers->size(); ++i)
    x = layers->ptr<TransformerDecoderLayerImpl>(i)->forward(x, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                                                             memory_key_padding_mask);
  return norm ? norm->forward(x) : x;
}

}  // namespace cohort::nn
