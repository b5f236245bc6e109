// Transformer encoder, as libtorch's nn::TransformerEncoderLayer and nn::TransformerEncoder (plus
// PyTorch's norm_first, layer_norm_eps and batch_first, which libtorch 1.13 lacks). Submodules and
// parameters have PyTorch's names (self_attn.in_proj_weight, linear1.weight, norm1.bias, ...;
// the encoder's layers.0..., norm...), so a state dict maps one to one.
//
// A layer (x: [S, N, d_model], or [N, S, d_model] with batch_first, or unbatched [S, d_model]):
//   post-norm (default):  x = norm1(x + dropout1(self_attn(x))); x = norm2(x + dropout2(ff(x)))
//   norm_first:           x = x + dropout1(self_attn(norm1(x))); x = x + dropout2(ff(norm2(x)))
//   ff(x) = linear2(dropout(activation(linear1(x)))), activation relu (default), gelu or a function
// src_mask and src_key_padding_mask are MultiheadAttention's attn_mask and key_padding_mask.
//
//   nn::TransformerEncoder enc(nn::TransformerEncoderOptions(
//       nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(64, 4).dim_feedforward(256)), 2));
//   Tensor y = enc(x, nn::generate_square_subsequent_mask(x.size(0)));
#pragma once

#include <functional>
#include <optional>
#include <variant>

#include "cohort/core/enum.h"  // kReLU, kGELU
#include "cohort/nn/attention.h"
#include "cohort/nn/basic.h"
#include "cohort/nn/container.h"
#include "cohort/nn/normalization.h"
#include "cohort/nn/rnn.h"

namespace cohort::nn {

// The feed-forward activation of the encoder and decoder layers: relu, gelu or a function.
using TransformerActivation = std::variant<enumtype::kReLU, enumtype::kGELU, std::function<Tensor(const Tensor&)>>;

namespace detail {

// The options an encoder layer and a decoder layer share (setters return the layer's own options).
template <class Self>
struct TransformerLayerOptions {
  using activation_t = TransformerActivation;

  TransformerLayerOptions(int64_t d_model, int64_t nhead) : d_model_(d_model), nhead_(nhead) {}
  Self& d_model(int64_t v) { d_model_ = v; return self(); }
  Self& nhead(int64_t v) { nhead_ = v; return self(); }
  Self& dim_feedforward(int64_t v) { dim_feedforward_ = v; return self(); }
  Self& dropout(double v) { dropout_ = v; return self(); }
  Self& activation(activation_t v) { activation_ = std::move(v); return self(); }
  Self& layer_norm_eps(double v) { layer_norm_eps_ = v; return self(); }
  Self& batch_first(bool v) { batch_first_ = v; return self(); }
  Self& norm_first(bool v) { norm_first_ = v; return self(); }
  int64_t d_model() const { return d_model_; }
  int64_t nhead() const { return nhead_; }
  int64_t dim_feedforward() const { return dim_feedforward_; }
  double dropout() const { return dropout_; }
  const activation_t& activation() const { return activation_; }
  double layer_norm_eps() const { return layer_norm_eps_; }
  bool batch_first() const { return batch_first_; }
  bool norm_first() const { return norm_first_; }

 private:
  Self& self() { return static_cast<Self&>(*this); }
  int64_t d_model_, nhead_, dim_feedforward_ = 2048;
  double dropout_ = 0.1;
  activation_t activation_ = kReLU;
  double layer_norm_eps_ = 1e-5;
  bool batch_first_ = false, norm_first_ = false;
};

}  // namespace detail

struct TransformerEncoderLayerOptions : detail::TransformerLayerOptions<TransformerEncoderLayerOptions> {
  TransformerEncoderLayerOptions(int64_t d_model, int64_t nhead)  // NOLINT
      : TransformerLayerOptions(d_model, nhead) {}
};

class TransformerEncoderLayerImpl : public Cloneable<TransformerEncoderLayerImpl> {
 public:
  TransformerEncoderLayerImpl(int64_t d_model, int64_t nhead)
      : TransformerEncoderLayerImpl(TransformerEncoderLayerOptions(d_model, nhead)) {}
  explicit TransformerEncoderLayerImpl(const TransformerEncoderLayerOptions& options);
  Tensor forward(const Tensor& src, const Tensor& src_mask = {}, const Tensor& src_key_padding_mask = {});
  // forward's two residual steps, each with its norm (PyTorch's _sa_block and _ff_block with the sum
  // and the norm around them): forward(x) is feed_forward_step(self_attention_step(x)). Apart, so
  // that each can run under a checkpoint of its own.
  Tensor self_attention_step(const Tensor& x, const Tensor& src_mask = {}, const Tensor& src_key_padding_mask = {});
  Tensor feed_forward_step(const Tensor& x);
  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& os) const override { os << "TransformerEncoderLayer"; }

  TransformerEncoderLayerOptions options;
  MultiheadAttention self_attn{nullptr};
  Linear linear1{nullptr};
  Dropout dropout{nullptr};
  Linear linear2{nullptr};
  LayerNorm norm1{nullptr}, norm2{nullptr};
  Dropout dropout1{nullptr}, dropout2{nullptr};

 private:
  Tensor activation(const Tensor& x);
};

using TransformerEncoderLayer = ModuleHolder<TransformerEncoderLayerImpl>;

struct TransformerEncoderOptions {
  TransformerEncoderOptions(TransformerEncoderLayer encoder_layer, int64_t num_layers)
      : encoder_layer_(std::move(encoder_layer)), num_layers_(num_layers) {}
  TransformerEncoderOptions(const TransformerEncoderLayerOptions& layer, int64_t num_layers)
      : encoder_layer_(TransformerEncoderLayer(layer)), num_layers_(num_layers) {}
  TransformerEncoderOptions& encoder_layer(TransformerEncoderLayer v) { encoder_layer_ = std::move(v); return *this; }
  TransformerEncoderOptions& num_layers(int64_t v) { num_layers_ = v; return *this; }
  // A final normalisation (typically LayerNorm), after the last layer; none by default.
  TransformerEncoderOptions& norm(AnyModule v) { norm_ = std::move(v); return *this; }
  const TransformerEncoderLayer& encoder_layer() const { return encoder_layer_; }
  int64_t num_layers() const { return num_layers_; }
  const std::optional<AnyModule>& norm() const { return norm_; }

 private:
  TransformerEncoderLayer encoder_layer_;
  int64_t num_layers_;
  std::optional<AnyModule> norm_;
};

// num_layers copies of encoder_layer (same initial values, as PyTorch's deepcopy), then norm.
class TransformerEncoderImpl : public Cloneable<TransformerEncoderImpl> {
 public:
  TransformerEncoderImpl(TransformerEncoderLayer encoder_layer, int64_t num_layers)
      : TransformerEncoderImpl(TransformerEncoderOptions(std::move(encoder_layer), num_layers)) {}
  explicit TransformerEncoderImpl(TransformerEncoderOptions options);
  Tensor forward(const Tensor& src, const Tensor& src_mask = {}, const Tensor& src_key_padding_mask = {});
  void reset() override;
  void reset_parameters();
  void pretty_print(std::ostream& os) const override { os << "TransformerEncoder"; }

  TransformerEncoderOptions options;
  ModuleList layers{nullptr};
  std::optional<AnyModule> norm;
};

using TransformerEncoder = ModuleHolder<TransformerEncoderImpl>;

}  // namespace cohort::nn
