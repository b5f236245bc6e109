// MultiheadAttention, TransformerEncoderLayer and TransformerEncoder against PyTorch
// (tests/fixtures/attention.json from tests/fixtures/generate_attention.py): state-dict names, outputs,
// attention weights and gradients with masks; float64 gradchecks; the causal mask; errors.
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include "support/error_of.h"
#include "support/gradcheck.h"
#include "support/pytorch_fixture.h"

#include <cohort/cohort.h>
#include <nlohmann/json.hpp>

using namespace cohort;
using json = nlohmann::json;
using ::testing::HasSubstr;

namespace {

Tensor decode_or_undefined(const json& entry) {
  return entry.is_null() ? Tensor() : cohort::testing::decode_tensor(entry);
}

void load(nn::Module& m, const json& state_dict) {
  nn::StateDict sd;
  for (const auto& [key, value] : state_dict.items()) sd.insert(key, cohort::testing::decode_tensor(value));
  m.load_state_dict(sd);
}

std::vector<std::string> keys_of(const nn::Module& m) {
  std::vector<std::string> keys;
  for (const auto& item : m.state_dict()) keys.push_back(item.key());
  return keys;
}

// Gradients of `loss` w.r.t. `inputs` (by name) and every parameter, against the fixture's.
void expect_grads(const std::string& name, const Tensor& loss, const std::vector<std::pair<std::string, Tensor>>& inputs,
                  nn::Module& m, const json& want) {
  std::vector<Tensor> wrt;
  std::vector<std::string> names;
  for (const auto& [n, t] : inputs) wrt.push_back(t), names.push_back(n);
  for (const auto& item : m.named_parameters()) wrt.push_back(item.value()), names.push_back(item.key());
  auto grads = autograd::grad({loss}, wrt);
  for (size_t i = 0; i < wrt.size(); ++i)
    EXPECT_TRUE(cohort::testing::matches_pytorch(name + " grad " + names[i], grads[i], want.at(names[i]), 1e-9));
}

}  // namespace

TEST(AttentionFixture, MultiheadAttentionMatchesPyTorch) {
  const json& fixture = cohort::testing::load_fixture("attention.json");
  int checked = 0;
  for (const json& c : fixture.at("mha")) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    const json& o = c.at("options");
    const int64_t E = o.at("embed_dim");
    nn::MultiheadAttention m(nn::MultiheadAttentionOptions(E, o.at("num_heads"))
                                 .bias(o.value("bias", true))
                                 .kdim(o.value("kdim", E))
                                 .vdim(o.value("vdim", E))
                                 .batch_first(o.value("batch_first", false)));
    m->to(kFloat64);
    EXPECT_EQ(keys_of(*m), c.at("state_dict_keys").get<std::vector<std::string>>());
    load(*m, c.at("state_dict"));
    std::vector<std::pair<std::string, Tensor>> inputs;
    for (const char* n : {"query", "key", "value"})
      if (c.at("inputs").contains(n))
        inputs.emplace_back(n, cohort::testing::decode_tensor(c.at("inputs").at(n)).requires_grad_());
    const Tensor& q = inputs[0].second;
    const Tensor& k = c.at("self_attention").get<bool>() ? q : inputs[1].second;
    const Tensor& v = c.at("self_attention").get<bool>() ? q : inputs[2].second;
    auto [out, weights] = m(q, k, v, decode_or_undefined(c.at("key_padding_mask")), c.at("need_weights").get<bool>(),
                            decode_or_undefined(c.at("attn_mask")), c.at("average_attn_weights").get<bool>());
    EXPECT_TRUE(cohort::testing::matches_pytorch(name + " output", out, c.at("results").at("output"), 1e-9));
    Tensor loss = (out * cohort::testing::decode_tensor(c.at("upstream").at("output"))).sum();
    if (c.at("results").contains("weights")) {
      EXPECT_TRUE(cohort::testing::matches_pytorch(name + " weights", weights, c.at("results").at("weights"), 1e-9));
      loss = loss + (weights * cohort::testing::decode_tensor(c.at("upstream").at("weights"))).sum();
    } else {
      EXPECT_FALSE(weights.defined());
    }
    expect_grads(name, loss, inputs, *m, c.at("grads"));
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

TEST(AttentionFixture, TransformerEncoderMatchesPyTorch) {
  const json& fixture = cohort::testing::load_fixture("attention.json");
  int checked = 0;
  for (const json& c : fixture.at("encoder")) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    const json& o = c.at("options");
    auto layer_options = nn::TransformerEncoderLayerOptions(o.at("d_model"), o.at("nhead"))
                             .dim_feedforward(o.at("dim_feedforward"))
                             .dropout(0.0)
                             .norm_first(o.value("norm_first", false))
                             .batch_first(o.value("batch_first", false));
    if (o.value("activation", std::string("relu")) == "gelu") layer_options.activation(kGELU);
    std::shared_ptr<nn::Module> m;
    std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)> run;
    if (c.at("num_layers").is_null()) {
      nn::TransformerEncoderLayer layer(layer_options);
      m = layer.ptr();
      run = [layer](const Tensor& x, const Tensor& mask, const Tensor& kpm) mutable { return layer(x, mask, kpm); };
    } else {
      auto options = nn::TransformerEncoderOptions(nn::TransformerEncoderLayer(layer_options), c.at("num_layers"));
      if (c.at("final_norm").get<bool>()) options.norm(nn::LayerNorm(nn::LayerNormOptions(std::vector<int64_t>{o.at("d_model").get<int64_t>()})));
      nn::TransformerEncoder enc(options);
      m = enc.ptr();
      run = [enc](const Tensor& x, const Tensor& mask, const Tensor& kpm) mutable { return enc(x, mask, kpm); };
    }
    m->to(kFloat64);
    EXPECT_EQ(keys_of(*m), c.at("state_dict_keys").get<std::vector<std::string>>());
    load(*m, c.at("state_dict"));
    Tensor x = cohort::testing::decode_tensor(c.at("input")).requires_grad_();
    Tensor out = run(x, decode_or_undefined(c.at("src_mask")), decode_or_undefined(c.at("key_padding_mask")));
    EXPECT_TRUE(cohort::testing::matches_pytorch(name + " output", out, c.at("output"), 1e-9));
    Tensor loss = (out * cohort::testing::decode_tensor(c.at("upstream"))).sum();
    expect_grads(name, loss, {{"input", x}}, *m, c.at("grads"));
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

TEST(Attention, CausalMaskLikePyTorch) {
  const json& fixture = cohort::testing::load_fixture("attention.json");
  EXPECT_TRUE(cohort::testing::matches_pytorch("causal mask", nn::generate_square_subsequent_mask(3, kFloat64),
                                               fixture.at("causal_mask_3")));
  EXPECT_EQ(nn::TransformerImpl::generate_square_subsequent_mask(2).dtype(), kFloat32);
}

TEST(Attention, MultiheadAttentionGradcheckWithMasks) {
  manual_seed(11);
  nn::MultiheadAttention m(nn::MultiheadAttentionOptions(4, 2).kdim(3));
  m->to(kFloat64);
  auto f64 = TensorOptions(kFloat64);
  Tensor q = randn({2, 2, 4}, f64), k = randn({3, 2, 3}, f64), v = randn({3, 2, 4}, f64);
  Tensor kpm = tensor(std::vector<int64_t>{0, 0, 1, 0, 0, 0}).view({2, 3}).to(kBool);
  Tensor mask = randn({2, 3}, f64);
  auto fn = [&](const std::vector<Tensor>& in) {
    auto [out, w] = m(in[0], in[1], in[2], kpm, true, mask, false);
    return std::vector<Tensor>{out, w};
  };
  EXPECT_TRUE(cohort::testing::gradcheck(fn, {q, k, v}));
  EXPECT_TRUE(cohort::testing::gradgradcheck(fn, {q, k, v}));
  // With respect to the parameters too: the projections and the output layer.
  Tensor w_in = m->q_proj_weight.detach().clone(), b_in = m->in_proj_bias.detach().clone();
  EXPECT_TRUE(cohort::testing::gradcheck(
      [&](const std::vector<Tensor>& p) {
        auto* impl = m.get();
        Tensor saved_w = impl->q_proj_weight, saved_b = impl->in_proj_bias;
        impl->q_proj_weight = p[0], impl->in_proj_bias = p[1];
        auto [out, w] = m(q, k, v, kpm, true, mask);
        impl->q_proj_weight = saved_w, impl->in_proj_bias = saved_b;
        return std::vector<Tensor>{out, w};
      },
      {w_in, b_in}));
}

// The packed input projection (Note [Packed input projection] in src/nn/attention.cpp): one function
// with three outputs for the query, key and value projections of in_proj_weight's row blocks.
TEST(Attention, PackedInputProjectionGradcheckAndMatchesChunkedLinears) {
  manual_seed(13);
  auto f64 = TensorOptions(kFloat64);
  nn::MultiheadAttention m(nn::MultiheadAttentionOptions(4, 2));
  m->to(kFloat64);
  Tensor q = randn({2, 3, 4}, f64), k = randn({5, 3, 4}, f64), v = randn({5, 3, 4}, f64);
  Tensor w_in = m->in_proj_weight.detach().clone(), b_in = randn({12}, f64);
  auto fn = [&](const std::vector<Tensor>& p) {
    auto* impl = m.get();
    Tensor saved_w = impl->in_proj_weight, saved_b = impl->in_proj_bias;
    impl->in_proj_weight = p[3], impl->in_proj_bias = p[4];
    auto [out, w] = m(p[0], p[1], p[2], Tensor(), true, Tensor(), false);
    impl->in_proj_weight = saved_w, impl->in_proj_bias = saved_b;
    return std::vector<Tensor>{out, w};
  };
  EXPECT_TRUE(cohort::testing::gradcheck(fn, {q, k, v, w_in, b_in}));
  EXPECT_TRUE(cohort::testing::gradgradcheck(fn, {q, k, v, w_in, b_in}));
  // Self-attention (one tensor as query, key and value), against three linears on chunks.
  Tensor x = randn({3, 2, 4}, f64).requires_grad_();
  Tensor w = w_in.clone().requires_grad_(), b = b_in.clone().requires_grad_();
  m->in_proj_weight = w, m->in_proj_bias = b;
  Tensor upstream = randn({3, 2, 4}, f64);
  (std::get<0>(m(x, x, x)) * upstream).sum().backward();
  Tensor x2 = x.detach().clone().requires_grad_();
  Tensor w2 = w_in.clone().requires_grad_(), b2 = b_in.clone().requires_grad_();
  auto ws = chunk(w2, 3, 0), bs = chunk(b2, 3, 0);
  auto heads = [](const Tensor& t, int64_t len) { return t.reshape({len, 4, 2}).transpose(0, 1); };
  Tensor qh = heads(linear(x2, ws[0], bs[0]), 3), kh = heads(linear(x2, ws[1], bs[1]), 3);
  Tensor vh = heads(linear(x2, ws[2], bs[2]), 3);
  Tensor attn = softmax(bmm(qh, kh.transpose(1, 2)) / std::sqrt(2.0), -1);
  Tensor out = m->out_proj(bmm(attn, vh).transpose(0, 1).reshape({6, 4})).view({3, 2, 4});
  (out * upstream).sum().backward();
  EXPECT_TRUE(x.grad().allclose(x2.grad(), 1e-10, 1e-12));
  EXPECT_TRUE(w.grad().allclose(w2.grad(), 1e-10, 1e-12));
  EXPECT_TRUE(b.grad().allclose(b2.grad(), 1e-10, 1e-12));
}

TEST(Attention, EncoderLayerGradcheckPreAndPostNorm) {
  manual_seed(12);
  auto f64 = TensorOptions(kFloat64);
  Tensor x = randn({3, 2, 4}, f64), mask = nn::generate_square_subsequent_mask(3, kFloat64);
  Tensor kpm = tensor(std::vector<int64_t>{0, 0, 1, 0, 0, 0}).view({2, 3}).to(kBool);
  for (bool norm_first : {false, true}) {
    nn::TransformerEncoderLayer layer(
        nn::TransformerEncoderLayerOptions(4, 2).dim_feedforward(5).dropout(0.0).norm_first(norm_first).activation(kGELU));
    layer->to(kFloat64);
    EXPECT_TRUE(cohort::testing::gradcheck(
        [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{layer(in[0], mask, kpm)}; }, {x}))
        << norm_first;
  }
}

TEST(Attention, EncoderLayersAreCopiesAndClonesKeepValues) {
  nn::TransformerEncoderLayer layer(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).activation(kGELU));
  nn::TransformerEncoder enc(nn::TransformerEncoderOptions(layer, 3));
  auto sd = enc->state_dict();
  EXPECT_TRUE(equal(sd["layers.0.linear1.weight"], layer->linear1->weight));
  EXPECT_TRUE(equal(sd["layers.2.self_attn.in_proj_weight"], layer->self_attn->in_proj_weight));
  EXPECT_EQ(sd.size(), 3u * 12u);
  auto copy = std::dynamic_pointer_cast<nn::TransformerEncoderImpl>(enc->clone());
  enc->eval(), copy->eval();
  Tensor x = randn({5, 2, 8});
  EXPECT_TRUE(allclose(copy->forward(x), enc(x)));
}

TEST(Attention, ErrorsNameTheShapes) {
  EXPECT_THAT(cohort::testing::error_of([] { nn::MultiheadAttention(6, 4); }),
              HasSubstr("MultiheadAttention: embed_dim=6 must be divisible by num_heads=4"));
  nn::MultiheadAttention m(4, 2);
  Tensor x = randn({3, 2, 4});
  EXPECT_THAT(cohort::testing::error_of([&] { m(x, x, x, Tensor(), true, ones({3, 2}).to(kBool)); }),
              HasSubstr("attn_mask must be [L, S] = [3, 3] or [N*num_heads, L, S] = [4, 3, 3], got [3, 2]"));
  EXPECT_THAT(cohort::testing::error_of([&] { m(x, x, x, ones({3, 3}).to(kBool)); }),
              HasSubstr("key_padding_mask must be [N, S] = [2, 3]"));
  EXPECT_THAT(cohort::testing::error_of([&] { m(randn({3, 2, 5}), x, x); }),
              HasSubstr("expected a query with embed_dim=4 features, got [3, 2, 5] ([L, N, E])"));
}
