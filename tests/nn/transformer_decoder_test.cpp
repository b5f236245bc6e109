// TransformerDecoderLayer, TransformerDecoder and Transformer against PyTorch
// (tests/fixtures/transformer.json from tests/fixtures/generate_transformer.py): state-dict names,
// outputs and gradients with causal and padding masks, pre- and post-norm, batch_first, unbatched;
// a float64 gradcheck; custom encoders and decoders; clones; errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cohort/cohort.h>
#include <nlohmann/json.hpp>

#include "support/error_of.h"
#include "support/gradcheck.h"
#include "support/pytorch_fixture.h"

namespace cohort::testing {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

Tensor decode_or_undefined(const json& entry) { return entry.is_null() ? Tensor() : decode_tensor(entry); }

std::vector<std::string> keys_of(const nn::Module& m) {
  std::vector<std::string> keys;
  for (const auto& item : m.state_dict()) keys.push_back(item.key());
  return keys;
}

void load(nn::Module& m, const json& state_dict) {
  nn::StateDict sd;
  for (const auto& [key, value] : state_dict.items()) sd.insert(key, decode_tensor(value));
  m.load_state_dict(sd);
}

nn::TransformerActivation activation_of(const json& o) {
  if (o.value("activation", std::string("relu")) == "gelu") return kGELU;
  return kReLU;
}

nn::TransformerDecoderLayerOptions decoder_layer_options(const json& o) {
  return nn::TransformerDecoderLayerOptions(o.at("d_model"), o.at("nhead"))
      .dim_feedforward(o.at("dim_feedforward"))
      .dropout(0.0)
      .activation(activation_of(o))
      .norm_first(o.value("norm_first", false))
      .batch_first(o.value("batch_first", false));
}

// The case's module and a call of it on the fixture's inputs and masks.
std::pair<std::shared_ptr<nn::Module>, std::function<Tensor(const std::vector<Tensor>&)>> build(const json& c) {
  const json& o = c.at("options");
  const json& m = c.at("masks");
  const std::string kind = c.at("kind");
  auto mask = [&](const char* name) { return decode_or_undefined(m.at(name)); };
  if (kind == "layer") {
    nn::TransformerDecoderLayer layer(decoder_layer_options(o));
    return {layer.ptr(), [=](const std::vector<Tensor>& in) mutable {
              return layer(in[0], in[1], mask("tgt_mask"), mask("memory_mask"), mask("tgt_key_padding_mask"),
                           mask("memory_key_padding_mask"));
            }};
  }
  if (kind == "decoder") {
    auto options = nn::TransformerDecoderOptions(decoder_layer_options(o), c.at("num_layers"));
    if (c.at("final_norm").get<bool>())
      options.norm(nn::LayerNorm(nn::LayerNormOptions(std::vector<int64_t>{o.at("d_model").get<int64_t>()})));
    nn::TransformerDecoder decoder(options);
    return {decoder.ptr(), [=](const std::vector<Tensor>& in) mutable {
              return decoder(in[0], in[1], mask("tgt_mask"), mask("memory_mask"), mask("tgt_key_padding_mask"),
                             mask("memory_key_padding_mask"));
            }};
  }
  nn::Transformer model(nn::TransformerOptions(o.at("d_model"), o.at("nhead"), o.at("num_encoder_layers"),
                                               o.at("num_decoder_layers"))
                            .dim_feedforward(o.at("dim_feedforward"))
                            .dropout(0.0)
                            .norm_first(o.value("norm_first", false))
                            .batch_first(o.value("batch_first", false)));
  return {model.ptr(), [=](const std::vector<Tensor>& in) mutable {
            return model(in[0], in[1], mask("src_mask"), mask("tgt_mask"), mask("memory_mask"),
                         mask("src_key_padding_mask"), mask("tgt_key_padding_mask"), mask("memory_key_padding_mask"));
          }};
}

TEST(TransformerFixture, DecoderAndTransformerMatchPyTorch) {
  int checked = 0;
  for (const json& c : load_fixture("transformer.json").at("cases")) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    auto [module, run] = build(c);
    module->to(kFloat64);
    EXPECT_EQ(keys_of(*module), c.at("state_dict_keys").get<std::vector<std::string>>());
    load(*module, c.at("state_dict"));
    // In the forward's order (a JSON object's keys come sorted).
    std::vector<std::string> names = c.at("kind") == "transformer" ? std::vector<std::string>{"src", "tgt"}
                                                                    : std::vector<std::string>{"tgt", "memory"};
    std::vector<Tensor> inputs;
    for (const std::string& input_name : names) inputs.push_back(decode_tensor(c.at("inputs").at(input_name)).requires_grad_());
    Tensor out = run(inputs);
    EXPECT_TRUE(matches_pytorch(name + " output", out, c.at("output"), 1e-9));
    std::vector<Tensor> wrt = inputs;
    for (const auto& item : module->named_parameters()) wrt.push_back(item.value()), names.push_back(item.key());
    auto grads = autograd::grad({(out * decode_tensor(c.at("upstream"))).sum()}, wrt);
    for (size_t i = 0; i < wrt.size(); ++i)
      EXPECT_TRUE(matches_pytorch(name + " grad " + names[i], grads[i], c.at("grads").at(names[i]), 1e-9));
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

TEST(TransformerDecoder, GradcheckThroughBothAttentions) {
  manual_seed(3);
  nn::TransformerDecoderLayer layer(nn::TransformerDecoderLayerOptions(4, 2).dim_feedforward(3).dropout(0.0));
  layer->to(kFloat64);
  const Tensor mask = nn::generate_square_subsequent_mask(2, kFloat64);
  auto fn = [&](const std::vector<Tensor>& in) { return std::vector<Tensor>{layer(in[0], in[1], mask)}; };
  EXPECT_TRUE(gradcheck(fn, {randn({2, 1, 4}, kFloat64), randn({3, 1, 4}, kFloat64)}));
}

TEST(Transformer, LayoutInitialisationAndCopies) {
  manual_seed(4);
  nn::Transformer model(nn::TransformerOptions(8, 2, 2, 1).dim_feedforward(16));
  // Every weight matrix starts Xavier-uniform: within sqrt(6 / (fan_in + fan_out)).
  for (const auto& item : model->named_parameters()) {
    const Tensor& p = item.value();
    if (p.dim() < 2) continue;
    const double bound = std::sqrt(6.0 / static_cast<double>(p.size(0) + p.size(1)));
    EXPECT_LE(p.abs().max().item<double>(), bound) << item.key();
  }
  EXPECT_TRUE(model->named_parameters().contains("encoder.layers.1.self_attn.in_proj_weight"));
  EXPECT_TRUE(model->named_parameters().contains("decoder.layers.0.multihead_attn.out_proj.weight"));
  EXPECT_TRUE(model->named_parameters().contains("decoder.norm.weight"));
  model->eval();
  Tensor src = randn({5, 3, 8}), tgt = randn({4, 3, 8});
  Tensor out = model->forward(src, tgt, {}, nn::TransformerImpl::generate_square_subsequent_mask(4));
  EXPECT_EQ(out.sizes(), (Shape{4, 3, 8}));
  auto copy = std::dynamic_pointer_cast<nn::TransformerImpl>(model->clone());
  ASSERT_TRUE(copy);
  EXPECT_TRUE(copy->forward(src, tgt, {}, nn::TransformerImpl::generate_square_subsequent_mask(4)).allclose(out));
  EXPECT_NE(copy->encoder.ptr(), model->encoder.ptr());  // a deep copy
}

TEST(Transformer, CustomEncoderAndDecoderAreCopiedIn) {
  nn::TransformerEncoder encoder(nn::TransformerEncoderOptions(nn::TransformerEncoderLayerOptions(4, 1).dim_feedforward(4), 1));
  nn::TransformerDecoder decoder(nn::TransformerDecoderOptions(nn::TransformerDecoderLayerOptions(4, 1).dim_feedforward(4), 3));
  nn::Transformer model(nn::TransformerOptions(4, 1).custom_encoder(encoder).custom_decoder(decoder));
  EXPECT_EQ(model->decoder.get<nn::TransformerDecoderImpl>().layers->size(), 3u);
  EXPECT_NE(model->encoder.ptr(), encoder.ptr());
  EXPECT_THAT(error_of([] { nn::Transformer(nn::TransformerOptions(4, 1).custom_encoder(nn::Linear(4, 4))); }),
              HasSubstr("Transformer: custom_encoder must be a TransformerEncoder (or derive from it), got Linear"));
  EXPECT_THAT(error_of([&] { model->decoder.forward(randn({2, 1, 4})); }),
              HasSubstr("AnyModule: TransformerDecoder's forward does not take one tensor"));
}

TEST(Transformer, ShapeErrorsNameBothInputs) {
  nn::Transformer model(nn::TransformerOptions(4, 2, 1, 1).dim_feedforward(4));
  EXPECT_THAT(error_of([&] { model(randn({3, 2, 4}), randn({3, 5, 4})); }),
              HasSubstr("Transformer: the batch number of src and tgt must be equal, got [3, 2, 4] and [3, 5, 4]"));
  EXPECT_THAT(error_of([&] { model(randn({3, 2, 4}), randn({3, 2, 6})); }),
              HasSubstr("Transformer: the feature number of src and tgt must be equal to d_model=4"));
  EXPECT_THAT(error_of([&] { model(randn({3, 4}), randn({3, 2, 4})); }),
              HasSubstr("Transformer: expected src and tgt both [S, N, E] (batched) or both [S, E]"));
  EXPECT_THAT(error_of([] { nn::TransformerDecoder(nn::TransformerDecoderOptions(nn::TransformerDecoderLayerOptions(4, 1), 0)); }),
              HasSubstr("TransformerDecoder: num_layers must be positive, got 0"));
}

}  // namespace
}  // namespace cohort::testing
