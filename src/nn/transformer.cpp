// The encoder-decoder Transformer: its two stacks (or the custom ones), the shape checks PyTorch makes,
// and Xavier-uniform initialisation.
#include "cohort/nn/transformer.h"

#include "cohort/nn/init.h"

namespace cohort::nn {

TransformerImpl::TransformerImpl(TransformerOptions options_) : options(std::move(options_)) { reset(); }

namespace {

// The options' layer options, for either stack.
template <class LayerOptions>
LayerOptions layer_options(const TransformerOptions& o) {
  return LayerOptions(o.d_model(), o.nhead())
      .dim_feedforward(o.dim_feedforward())
      .dropout(o.dropout())
      .activation(o.activation())
      .layer_norm_eps(o.layer_norm_eps())
      .batch_first(o.batch_first())
      .norm_first(o.norm_first());
}

// A copy of the custom stack (as libtorch copies it), which must be a Stack, or the options' own:
// num_layers layers and a final LayerNorm.
template <class StackImpl, class Stack, class StackOptions, class LayerOptions>
AnyModule stack_of(const TransformerOptions& o, const std::optional<AnyModule>& custom, int64_t num_layers,
                   const char* option, const char* type) {
  if (custom) {
    AnyModule copy = custom->rebound(custom->ptr()->clone());
    COHORT_CHECK(std::dynamic_pointer_cast<StackImpl>(copy.ptr()) != nullptr, "Transformer: ", option, " must be a ",
                 type, " (or derive from it), got ", copy.ptr()->name());
    return copy;
  }
  return Stack(StackOptions(layer_options<LayerOptions>(o), num_layers)
                   .norm(LayerNorm(LayerNormOptions({o.d_model()}).eps(o.layer_norm_eps()))));
}

}  // namespace

void TransformerImpl::reset() {
  encoder = stack_of<TransformerEncoderImpl, TransformerEncoder, TransformerEncoderOptions,
                     TransformerEncoderLayerOptions>(options, options.custom_encoder(), options.num_encoder_layers(),
                                                     "custom_encoder", "TransformerEncoder");
  decoder = stack_of<TransformerDecoderImpl, TransformerDecoder, TransformerDecoderOptions,
                     TransformerDecoderLayerOptions>(options, options.custom_decoder(), options.num_decoder_layers(),
                                                     "custom_decoder", "TransformerDecoder");
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
