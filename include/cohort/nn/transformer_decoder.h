// Transformer decoder, as libtorch's nn::TransformerDecoderLayer and nn::TransformerDecoder (plus
// PyTorch's norm_first, layer_norm_eps and batch_first). Submodules and parameters have PyTorch's
// names (self_attn, multihead_attn, linear1, linear2, norm1..3; the decoder's layers.0..., norm), so a
// state dict maps one to one.
//
// A layer (tgt: [T, N, d_model], or [N, T, d_model] with batch_first, or unbatched [T, d_model];
// memory: the encoder's output, [S, N, d_model] likewise):
//   post-norm (default):  x = norm1(x + sa(x)); x = norm2(x + mha(x, memory)); x = norm3(x + ff(x))
//   norm_first:           x = x + sa(norm1(x)); x = x + mha(norm2(x), memory); x = x + ff(norm3(x))
// sa is self-attention with tgt_mask and tgt_key_padding_mask, mha attends to memory with memory_mask
// and memory_key_padding_mask (MultiheadAttention's attn_mask and key_padding_mask); each block's
// output passes a dropout. ff(x) = linear2(dropout(activation(linear1(x)))).
//
//   nn::TransformerDecoder dec(nn::TransformerDecoderOptions(nn::TransformerDecoderLayerOptions(64, 4), 2));
//   Tensor y = dec(tgt, memory, nn::generate_square_subsequent_mask(tgt.size(0)));
#pragma once

#include <optional>

#include "cohort/nn/transformer_encoder.h"

namespace cohort::nn {

struct TransformerDecoderLayerOptions : detail::TransformerLayerOptions<TransformerDecoderLayerOptions> {
  TransformerDecoderLayerOptions(int64_t d_model, int64_t nhead)  // NOLINT
      : TransformerLayerOptions(d_model, nhead) {}
};

class TransformerDecoderLayerImpl : public Cloneable<TransformerDecoderLayerImpl> {
 public:
  TransformerDecoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerDecoderLayerImpl(TransformerDecoderLayerOptions(d_model, nhead)) {}
  explicit TransformerDecoderLayerImpl(const TransformerDecoderLayerOptions& options);
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {}, const Tensor& memory_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {});
  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& os) const override { os << "TransformerDecoderLayer"; }

  TransformerDecoderLayerOptions options;
  MultiheadAttention self_attn{nullptr}, multihead_attn{nullptr};
  Linear linear1{nullptr};
  Dropout dropout{nullptr};
  Linear linear2{nullptr};
  LayerNorm norm1{nullptr}, norm2{nullptr}, norm3{nullptr};
  Dropout dropout1{nullptr}, dropout2{nullptr}, dropout3{nullptr};
};

using TransformerDecoderLayer = ModuleHolder<TransformerDecoderLayerImpl>;

struct TransformerDecoderOptions {
  TransformerDecoderOptions(TransformerDecoderLayer decoder_layer, int64_t num_layers)
      : decoder_layer_(std::move(decoder_layer)), num_layers_(num_layers) {}
  TransformerDecoderOptions(const TransformerDecoderLayerOptions& layer, int64_t num_layers)
      : decoder_layer_(TransformerDecoderLayer(layer)), num_layers_(num_layers) {}
  TransformerDecoderOptions& decoder_layer(TransformerDecoderLayer v) { decoder_layer_ = std::move(v); return *this; }
  TransformerDecoderOptions& num_layers(int64_t v) { num_layers_ = v; return *this; }
  // A final normalisation (typically LayerNorm), after the last layer; none by default.
  TransformerDecoderOptions& norm(AnyModule v) { norm_ = std::move(v); return *this; }
  const TransformerDecoderLayer& decoder_layer() const { return decoder_layer_; }
  int64_t num_layers() const { return num_layers_; }
  const std::optional<AnyModule>& norm() const { return norm_; }

 private:
  TransformerDecoderLayer decoder_layer_;
  int64_t num_layers_;
  std::optional<AnyModule> norm_;
};

// num_layers copies of decoder_layer (same initial values, as PyTorch's deepcopy), then norm.
class TransformerDecoderImpl : public Cloneable<TransformerDecoderImpl> {
 public:
  TransformerDecoderImpl(TransformerDecoderLayer decoder_layer, int64_t num_layers)
      : TransformerDecoderImpl(TransformerDecoderOptions(std::move(decoder_layer), num_layers)) {}
  explicit TransformerDecoderImpl(TransformerDecoderOptions options);
  Tensor forward(const Tensor& tgt, const Tensor& memory, const Tensor& tgt_mask = {}, const Tensor& memory_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {});
  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& os) const override { os << "TransformerDecoder"; }

  TransformerDecoderOptions options;
  ModuleList layers{nullptr};
  std::optional<AnyModule> norm;
};

using TransformerDecoder = ModuleHolder<TransformerDecoderImpl>;

}  // namespace cohort::nn
