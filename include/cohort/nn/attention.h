// Multi-head attention, as libtorch's nn::MultiheadAttention (plus PyTorch's batch_first, which
// libtorch 1.13 lacks). Parameters have PyTorch's names and shapes, so a state dict maps one to one:
// in_proj_weight [3E, E] (or q_proj_weight [E, E], k_proj_weight [E, kdim], v_proj_weight [E, vdim]
// when kdim or vdim differ from E), in_proj_bias [3E], out_proj.weight [E, E], out_proj.bias [E].
//
// Shapes (E = embed_dim, H = num_heads, L target length, S source length, N batch):
//   query [L, N, E], key [S, N, kdim], value [S, N, vdim] ([N, L, E]... with batch_first), or
//   unbatched [L, E], [S, kdim], [S, vdim]
//   key_padding_mask [N, S] ([S] unbatched): bool, true = ignore that key; or float, added
//   attn_mask [L, S] or [N*H, L, S]: bool, true = not allowed to attend; or float, added
//   returns (output [L, N, E] (batch_first [N, L, E]), weights [N, L, S] averaged over heads, or
//   [N, H, L, S] with average_attn_weights=false; undefined with need_weights=false)
//
//   nn::MultiheadAttention mha(nn::MultiheadAttentionOptions(16, 4).batch_first(true));
//   auto [out, weights] = mha(x, x, x, /*key_padding_mask=*/pad, /*need_weights=*/true,
//                             nn::generate_square_subsequent_mask(T));
//
// Composed of ops (linear, baddbmm, softmax, dropout, bmm), so autograd differentiates it to any
// order. Errors name the module, the argument, the expected and the given shape.
#pragma once

#include <tuple>

#include "cohort/nn/linear.h"
#include "cohort/nn/module_holder.h"

namespace cohort::nn {

struct MultiheadAttentionOptions {
  MultiheadAttentionOptions(int64_t embed_dim, int64_t num_heads)
      : embed_dim_(embed_dim), num_heads_(num_heads), kdim_(embed_dim), vdim_(embed_dim) {}
  MultiheadAttentionOptions& embed_dim(int64_t v) { embed_dim_ = v; return *this; }
  MultiheadAttentionOptions& num_heads(int64_t v) { num_heads_ = v; return *this; }
  MultiheadAttentionOptions& dropout(double v) { dropout_ = v; return *this; }  // on the attention weights
  MultiheadAttentionOptions& bias(bool v) { bias_ = v; return *this; }
  MultiheadAttentionOptions& add_bias_kv(bool v) { add_bias_kv_ = v; return *this; }      // only false
  MultiheadAttentionOptions& add_zero_attn(bool v) { add_zero_attn_ = v; return *this; }  // only false
  MultiheadAttentionOptions& kdim(int64_t v) { kdim_ = v; return *this; }
  MultiheadAttentionOptions& vdim(int64_t v) { vdim_ = v; return *this; }
  MultiheadAttentionOptions& batch_first(bool v) { batch_first_ = v; return *this; }  // PyTorch's, not libtorch 1.13's
  int64_t embed_dim() const { return embed_dim_; }
  int64_t num_heads() const { return num_heads_; }
  double dropout() const { return dropout_; }
  bool bias() const { return bias_; }
  bool add_bias_kv() const { return add_bias_kv_; }
  bool add_zero_attn() const { return add_zero_attn_; }
  int64_t kdim() const { return kdim_; }
  int64_t vdim() const { return vdim_; }
  bool batch_first() const { return batch_first_; }

 private:
  int64_t embed_dim_, num_heads_;
  double dropout_ = 0.0;
  bool bias_ = true, add_bias_kv_ = false, add_zero_attn_ = false;
  int64_t kdim_, vdim_;
  bool batch_first_ = false;
};

class MultiheadAttentionImpl : public Cloneable<MultiheadAttentionImpl> {
 public:
  MultiheadAttentionImpl(int64_t embed_dim, int64_t num_heads)
      : MultiheadAttentionImpl(MultiheadAttentionOptions(embed_dim, num_heads)) {}
  explicit MultiheadAttentionImpl(const MultiheadAttentionOptions& options);

  std::tuple<Tensor, Tensor> forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                     const Tensor& key_padding_mask = {}, bool need_weights = true,
                                     const Tensor& attn_mask = {}, bool average_attn_weights = true);
  void reset() override;
  void _reset_parameters();  // libtorch's name: xavier_uniform_ projections, zero biases
  void pretty_print(std::ostream& os) const override;

  MultiheadAttentionOptions options;
  bool _qkv_same_embed_dim = true;
  Tensor in_proj_weight, in_proj_bias, bias_k, bias_v;  // bias_k, bias_v stay undefined
  Linear out_proj{nullptr};
  Tensor q_proj_weight, k_proj_weight, v_proj_weight;
  int64_t head_dim = 0;
};

using MultiheadAttention = ModuleHolder<MultiheadAttentionImpl>;

// A causal mask for a sequence of sz steps: [sz, sz] float, 0 on and below the diagonal, -inf
// above (step i attends to steps 0..i). libtorch's TransformerImpl::generate_square_subsequent_mask.
Tensor generate_square_subsequent_mask(int64_t sz, const TensorOptions& options = {});

}  // namespace cohort::nn
