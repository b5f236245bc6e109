// The encoder-decoder Transformer: its two stacks (or the custom ones), the shape checks PyTorch makes,
// and Xavier-uniform initialisation.
#include "cohort/nn/transformer.h"

#include "cohort/nn/init.h"

namespace cohort::nn {

TransformerImpl::TransformerImpl(TransformerOptions options_) : options(std::move(options_)) { reset(); }

void TransformerImpl::reset() {
  const auto& o = options;
  if (o.custom_encoder()) {
    encoder = o.custom_encoder()->rebound(o.custom_encoder()->ptr()->clone());  // a copy, as libtorch
    COHORT_CHECK(std::dynamic_pointer_cast<TransformerEncoderImpl>(encoder.ptr()) != nullptr,
                 "Transformer: custom_encoder must be a TransformerEncoder (or derive from it), got ",
                 encoder.ptr()->name());
  } else {
    auto layer = TransformerEncoderLayer(TransformerEncoderLayerOptions(o.d_model(), o.nhead())
                                             .dim_feedforward(o.dim_feedforward())
                                             .dropout(o.dropout())
                                             .activation(o.activation())
                                             .layer_norm_eps(o.layer_norm_eps())
                                             .batch_first(o.batch_first())
                                             .norm_first(o.norm_first()));
    encoder = TransformerEncoder(TransformerEncoderOptions(layer, o.num_encoder_layers())
                                     .norm(LayerNorm(LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps()))));
  }
  if (o.custom_decoder()) {
    decoder = o.custom_decoder()->rebound(o.custom_decoder()->ptr()->clone());
    COHORT_CHECK(std::dynamic_pointer_cast<TransformerDecoderImpl>(decoder.ptr()) != nullptr,
                 "Transformer: custom_decoder must be a TransformerDecoder (or derive from it), got ",
                 decoder.ptr()->name());
  } else {
    auto layer = TransformerDecoderLayer(TransformerDecoderLayerOptions(o.d_model(), o.nhead())
                                             .dim_feedforward(o.dim_feedforward())
                                             .dropout(o.dropout())
                                             .activation(o.activation())
                                             .layer_norm_eps(o.layer_norm_eps())
                                             .batch_first(o.batch_first())
                                             .norm_first(o.norm_first()));
    decoder = TransformerDecoder(TransformerDecoderOptions(layer, o.num_decoder_layers())
                                     .norm(LayerNorm(LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps()))));
  }
  register_module("encoder", encoder.ptr());
  register_module("decoder", decoder.ptr());
  reset_parameters();
}

void TransformerImpl::reset_parameters() {
  for (Tensor& p : parameters())
    if (p.dim() > 1) init::xavier_uniform_(p);
}

Tensor TransformerImpl::forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask, const Tensor& tgt_mask,
                                const Tensor& memory_mask, const Tensor& src_key_padding_mask,
                                const Tensor& tgt_key_padding_mask, const Tensor& memory_key_padding_mask) {
  COHORT_CHECK(src.defined() && tgt.defined(), "Transformer: src and tgt must be defined");
  COHORT_CHECK(src.dim() == tgt.dim() && (src.dim() == 2 || src.dim() == 3),
               "Transformer: expected src and tgt both [S, N, E] (batched) or both [S, E], got shapes ", src.sizes(),
               " and ", tgt.sizes());
  const int64_t batch_dim = options.batch_first() ? 0 : 1;
  COHORT_CHECK(src.dim() == 2 || src.size(batch_dim) == tgt.size(batch_dim),
               "Transformer: the batch number of src and tgt must be equal, got ", src.sizes(), " and ", tgt.sizes());
  COHORT_CHECK(src.size(-1) == options.d_model() && tgt.size(-1) == options.d_model(),
               "Transformer: the feature number of src and tgt must be equal to d_model=", options.d_model(), ", got ",
               src.sizes(), " and ", tgt.sizes());
  Tensor memory = encoder.get<TransformerEncoderImpl>().forward(src, src_mask, src_key_padding_mask);
  return decoder.get<TransformerDecoderImpl>().forward(tgt, memory, tgt_mask, memory_mask, tgt_key_padding_mask,
                                                       memory_key_padding_mask);
}

}  // namespace cohort::nn
