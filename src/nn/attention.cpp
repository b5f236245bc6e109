// Multi-head attention composed of ops: three projections, scaled scores with the masks added by
// baddbmm (in the product's pass, Note [Fused addend] in src/ops/dnnl/matmul.cpp), softmax,
// dropout, the weighted sum of values and the output projection.
#include "cohort/nn/attention.h"

#include <cmath>
#include <limits>
#include <ostream>

#include "cohort/autograd/trace.h"
#include "cohort/nn/functional/activation.h"
#include "cohort/nn/init.h"
#include "cohort/ops/attention.h"
#include "cohort/ops/autocast.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/linalg.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"

namespace cohort::nn {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// A mask as a tensor added to the scores: bool true -> -inf, float as is.
Tensor additive(const Tensor& mask, const Tensor& like, const char* what) {
  if (mask.dtype() == kBool) return zeros(mask.sizes(), like.options()).masked_fill(mask, kNegInf);
  // Under autocast the query is narrowed while a float mask (generate_square_subsequent_mask's) stays
  // float32: the scores' baddbmm casts it to the autocast dtype, as PyTorch's does.
  if (autocast::is_cpu_enabled() && mask.is_floating_point()) return mask;
  COHORT_CHECK(mask.dtype() == like.dtype(), "MultiheadAttention: ", what, " must be bool or ", like.dtype(),
               " like the query, got ", mask.dtype());
  return mask;
}

}  // namespace

MultiheadAttentionImpl::MultiheadAttentionImpl(const MultiheadAttentionOptions& options_) : options(options_) {
  reset();
}

void MultiheadAttentionImpl::reset() {
  const int64_t E = options.embed_dim(), H = options.num_heads();
  COHORT_CHECK(E > 0 && H > 0, "MultiheadAttention: embed_dim and num_heads must be positive, got ", E, " and ", H);
  COHORT_CHECK(E % H == 0, "MultiheadAttention: embed_dim=", E, " must be divisible by num_heads=", H);
  COHORT_CHECK(options.dropout() >= 0 && options.dropout() <= 1, "MultiheadAttention: dropout must be in [0, 1], got ",
               options.dropout());
  COHORT_CHECK(!options.add_bias_kv() && !options.add_zero_attn(), "MultiheadAttention: add_bias_kv and "
               "add_zero_attn are not supported; hint: leave them false (the default)");
  head_dim = E / H;
  _qkv_same_embed_dim = options.kdim() == E && options.vdim() == E;
  if (_qkv_same_embed_dim) {
    in_proj_weight = register_parameter("in_proj_weight", empty({3 * E, E}));
  } else {
    q_proj_weight = register_parameter("q_proj_weight", empty({E, E}));
    k_proj_weight = register_parameter("k_proj_weight", empty({E, options.kdim()}));
    v_proj_weight = register_parameter("v_proj_weight", empty({E, options.vdim()}));
  }
  if (options.bias()) in_proj_bias = register_parameter("in_proj_bias", empty({3 * E}));
  out_proj = register_module("out_proj", Linear(LinearOptions(E, E).bias(options.bias())));
  _reset_parameters();
}

void MultiheadAttentionImpl::_reset_parameters() {
  if (_qkv_same_embed_dim) {
    init::xavier_uniform_(in_proj_weight);
  } else {
    init::xavier_uniform_(q_proj_weight);
    init::xavier_uniform_(k_proj_weight);
    init::xavier_uniform_(v_proj_weight);
  }
  if (in_proj_bias.defined()) {
    init::zeros_(in_proj_bias);
    init::zeros_(out_proj->bias);
  }
}

void MultiheadAttentionImpl::pretty_print(std::ostream& os) const { os << "MultiheadAttention"; }

std::tuple<Tensor, Tensor> MultiheadAttentionImpl::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                                           const Tensor& key_padding_mask, bool need_weights,
                                                           const Tensor& attn_mask, bool average_attn_weights) {
  const int64_t E = options.embed_dim(), H = options.num_heads();
  // Reports as one op (the exporter writes its MatMul/Softmax decomposition) with its weights and
  // attention mask; the ops inside run unrecorded.
  trace::OpScope trace("multihead_attention");
  if (trace) {
    trace.refuse_if(is_training() && options.dropout() > 0, "in training mode with dropout; hint: call eval() first");
    trace.refuse_if(!_qkv_same_embed_dim, "with kdim or vdim other than embed_dim");
    trace.refuse_if(key_padding_mask.defined(), "with a key_padding_mask");
    trace.refuse_if(query.dim() != 3, "on an unbatched input; hint: unsqueeze it to a batch of one");
  }
  COHORT_CHECK(query.defined() && key.defined() && value.defined(), "MultiheadAttention: query, key and value must "
               "be defined");
  COHORT_CHECK((query.dim() == 3 || query.dim() == 2) && key.dim() == query.dim() && value.dim() == query.dim(),
               "MultiheadAttention: expected query, key and value all 3-d (batched) or all 2-d (unbatched), got ",
               query.sizes(), ", ", key.sizes(), " and ", value.sizes());
  const bool batched = query.dim() == 3;
  Tensor q = query, k = key, v = value, kpm = key_padding_mask;
  if (!batched) {
    q = q.unsqueeze(1), k = k.unsqueeze(1), v = v.unsqueeze(1);
    if (kpm.defined()) kpm = kpm.unsqueeze(0);
  } else if (options.batch_first()) {
    q = q.transpose(0, 1), k = k.transpose(0, 1), v = v.transpose(0, 1);
  }
  const int64_t L = q.size(0), N = q.size(1), S = k.size(0), hd = head_dim;
  const char* layout = !batched ? " (unbatched: [L, E])" : options.batch_first() ? " ([N, L, E])" : " ([L, N, E])";
  COHORT_CHECK(q.size(2) == E, "MultiheadAttention: expected a query with embed_dim=", E, " features, got ",
               query.sizes(), layout);
  COHORT_CHECK(k.size(2) == options.kdim() && v.size(2) == options.vdim(), "MultiheadAttention: expected a key with ",
               "kdim=", options.kdim(), " and a value with vdim=", options.vdim(), " features, got ", key.sizes(),
               " and ", value.sizes());
  COHORT_CHECK(k.size(0) == v.size(0) && k.size(1) == N && v.size(1) == N, "MultiheadAttention: key ", key.sizes(),
               " and value ", value.sizes(), " must have the same length and the query's batch, ", N);

  // Projections, split into heads: [len, N, E] -> [N*H, len, hd].
  Tensor wq = q_proj_weight, wk = k_proj_weight, wv = v_proj_weight, bq, bk, bv;
  if (_qkv_same_embed_dim) {
    auto w = chunk(in_proj_weight, 3, 0);
    wq = w[0], wk = w[1], wv = w[2];
  }
  if (in_proj_bias.defined()) {
    auto b = chunk(in_proj_bias, 3, 0);
    bq = b[0], bk = b[1], bv = b[2];
  }
  auto heads = [&](const Tensor& x, int64_t len) { return x.reshape({len, N * H, hd}).transpose(0, 1); };
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  Tensor pq, pk, pv;
  const DType dtype = in_proj_weight.defined() ? in_proj_weight.dtype() : q.dtype();
  const bool packed = _qkv_same_embed_dim && !autocast::is_cpu_enabled() && q.dtype() == dtype &&
                      k.dtype() == dtype && v.dtype() == dtype && (!bq.defined() || in_proj_bias.dtype() == dtype);
  if (packed) {  // one node for the three (Note [Packed input projection] in src/ops/attention.cpp)
    auto p = in_projection_packed(q.reshape({L * N, E}), k.reshape({S * N, E}), v.reshape({S * N, E}),
                                  in_proj_weight, in_proj_bias);
    pq = p[0], pk = p[1], pv = p[2];
  } else {
    pq = functional::linear(q, wq, bq), pk = functional::linear(k, wk, bk), pv = functional::linear(v, wv, bv);
  }
  Tensor qh = heads(pq, L), kh = heads(pk, S), vh = heads(pv, S);

  // Masks, added to the scores: [L, S] or [N*H, L, S], and [N, S] broadcast over heads and targets.
  Tensor mask;
  if (attn_mask.defined()) {
    const bool ok = (attn_mask.dim() == 2 && attn_mask.sizes() == IntArrayRef({L, S})) ||
                    (attn_mask.dim() == 3 && attn_mask.sizes() == IntArrayRef({N * H, L, S}));
    COHORT_CHECK(ok, "MultiheadAttention: attn_mask must be [L, S] = ", Shape{L, S}, " or [N*num_heads, L, S] = ",
                 Shape{N * H, L, S}, ", got ", attn_mask.sizes());
    mask = additive(attn_mask.dim() == 2 ? attn_mask.unsqueeze(0) : attn_mask, qh, "attn_mask");
  }
  if (kpm.defined()) {
    COHORT_CHECK(kpm.dim() == 2 && kpm.size(0) == N && kpm.size(1) == S, "MultiheadAttention: key_padding_mask must "
                 "be [N, S] = ", Shape{N, S}, batched ? "" : " ([S] unbatched)", ", got ", key_padding_mask.sizes());
    Tensor k_mask = additive(kpm, qh, "key_padding_mask").view({N, 1, 1, S}).expand({N, H, 1, S}).reshape({N * H, 1, S});
    mask = mask.defined() ? mask + k_mask : k_mask;
  }
  // The scaling rides on the product: baddbmm's alpha (PyTorch scales q first; with a power-of-two
  // head_dim the two round alike).
  Tensor scores = mask.defined() ? baddbmm(mask, qh, kh.transpose(1, 2), 1, scale) : bmm(qh * scale, kh.transpose(1, 2));
  Tensor attn = softmax(scores, -1);
  if (is_training() && options.dropout() > 0) attn = functional::dropout(attn, options.dropout(), true);
  Tensor out = bmm(attn, vh).transpose(0, 1).reshape({L * N, E});
  out = out_proj(out).view({L, N, E});

  Tensor weights;
  if (need_weights) {
    weights = attn.view({N, H, L, S});
    if (average_attn_weights) weights = weights.mean({1});
    if (!batched) weights = weights.squeeze(0);
  }
  if (!batched) out = out.squeeze(1);
  else if (options.batch_first()) out = out.transpose(0, 1);
  if (trace)  // the weights, an output the trace does not name, are refused by the exporter if read
    trace.record({query, key, value, attn_mask, in_proj_weight, in_proj_bias, out_proj->weight, out_proj->bias}, out,
                 {{"num_heads", H}, {"batch_first", int64_t{options.batch_first()}}});
  return {out, weights};
}

Tensor generate_square_subsequent_mask(int64_t sz, const TensorOptions& options) {
  COHORT_CHECK(sz >= 0, "generate_square_subsequent_mask: the size must be non-negative, got ", sz);
  Tensor steps = arange(sz, TensorOptions(kInt64).device(options.device()));
  return zeros({sz, sz}, options).masked_fill(steps.unsqueeze(0) > steps.unsqueeze(1), kNegInf);
}

}  // namespace cohort::nn
