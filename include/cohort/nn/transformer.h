// Transformers, as libtorch's nn::Transformer: an encoder (cohort/nn/transformer_encoder.h) and a
// decoder (cohort/nn/transformer_decoder.h), each of its layers followed by a final LayerNorm, and the
// causal mask generate_square_subsequent_mask. Parameters have PyTorch's names (encoder.layers.0...,
// encoder.norm, decoder.layers.0..., decoder.norm), so a state dict maps one to one.
//
//   nn::Transformer model(nn::TransformerOptions(64, 4, 2, 2).dim_feedforward(128).dropout(0.1));
//   Tensor out = model(src, tgt, {}, nn::TransformerImpl::generate_square_subsequent_mask(tgt.size(0)));
//
// src: [S, N, d_model], tgt: [T, N, d_model] (batch_first: [N, S, d_model]; unbatched: no N). Returns
// the decoder's output, tgt's shape. The parameters of dim > 1 start Xavier-uniform, as PyTorch's.
#pragma once

#include <optional>

#include "cohort/nn/transformer_decoder.h"
#include "cohort/nn/transformer_encoder.h"

namespace cohort::nn {

struct TransformerOptions {
  using activation_t = TransformerActivation;

  TransformerOptions() = default;
  TransformerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  TransformerOptions(int64_t d_model, int64_t nhead, int64_t num_encoder_layers, int64_t num_decoder_layers)
      : d_model_(d_model), nhead_(nhead), num_encoder_layers_(num_encoder_layers),
        num_decoder_layers_(num_decoder_layers) {}
  TransformerOptions& d_model(int64_t v) { d_model_ = v; return *this; }
  TransformerOptions& nhead(int64_t v) { nhead_ = v; return *this; }
  TransformerOptions& num_encoder_layers(int64_t v) { num_encoder_layers_ = v; return *this; }
  TransformerOptions& num_decoder_layers(int64_t v) { num_decoder_layers_ = v; return *this; }
  TransformerOptions& dim_feedforward(int64_t v) { dim_feedforward_ = v; return *this; }
  TransformerOptions& dropout(double v) { dropout_ = v; return *this; }
  TransformerOptions& activation(activation_t v) { activation_ = std::move(v); return *this; }
  // A TransformerEncoder or TransformerDecoder (or a module derived from one) used instead of the
  // one the options would build.
  TransformerOptions& custom_encoder(AnyModule v) { custom_encoder_ = std::move(v); return *this; }
  TransformerOptions& custom_decoder(AnyModule v) { custom_decoder_ = std::move(v); return *this; }
  TransformerOptions& layer_norm_eps(double v) { layer_norm_eps_ = v; return *this; }
  TransformerOptions& batch_first(bool v) { batch_first_ = v; return *this; }
  TransformerOptions& norm_first(bool v) { norm_first_ = v; return *this; }
  int64_t d_model() const { return d_model_; }
  int64_t nhead() const { return nhead_; }
  int64_t num_encoder_layers() const { return num_encoder_layers_; }
  int64_t num_decoder_layers() const { return num_decoder_layers_; }
  int64_t dim_feedforward() const { return dim_feedforward_; }
  double dropout() const { return dropout_; }
  const activation_t& activation() const { return activation_; }
  const std::optional<AnyModule>& custom_encoder() const { return custom_encoder_; }
  const std::optional<AnyModule>& custom_decoder() const { return custom_decoder_; }
  double layer_norm_eps() const { return layer_norm_eps_; }
  bool batch_first() const { return batch_first_; }
  bool norm_first() const { return norm_first_; }

 private:
  int64_t d_model_ = 512, nhead_ = 8, num_encoder_layers_ = 6, num_decoder_layers_ = 6, dim_feedforward_ = 2048;
  double dropout_ = 0.1;
  activation_t activation_ = kReLU;
  std::optional<AnyModule> custom_encoder_, custom_decoder_;
  double layer_norm_eps_ = 1e-5;
  bool batch_first_ = false, norm_first_ = false;
};

class TransformerImpl : public Cloneable<TransformerImpl> {
 public:
  explicit TransformerImpl(TransformerOptions options = {});
  Tensor forward(const Tensor& src, const Tensor& tgt, const Tensor& src_mask = {}, const Tensor& tgt_mask = {},
                 const Tensor& memory_mask = {}, const Tensor& src_key_padding_mask = {},
                 const Tensor& tgt_key_padding_mask = {}, const Tensor& memory_key_padding_mask = {});
  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& os) const override { os << "Transformer"; }
  // The causal mask: 0 on and below the diagonal, -inf above (step i attends to steps 0..i).
  static Tensor generate_square_subsequent_mask(int64_t sz) { return nn::generate_square_subsequent_mask(sz); }

  TransformerOptions options;
  AnyModule encoder{TransformerEncoder(nullptr)}, decoder{TransformerDecoder(nullptr)};
};

using Transformer = ModuleHolder<TransformerImpl>;

}  // namespace cohort::nn
