// Embedding through nn: PyTorch's values and gradients (tests/fixtures/pool_norm.json), padding_idx,
// repr and errors. The op's values and gradients are in the op table (tests/ops/op_table_nn_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/pytorch_fixture.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cohort/autograd/engine.h"
#include "cohort/autograd/node.h"
#include "cohort/core/generator.h"
#include "cohort/nn/embedding.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "support/error_of.h"

namespace cohort {
namespace {

namespace F = nn::functional;
using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::error_of;

TEST(EmbeddingFixture, MatchesPyTorchValuesAndGradients) {
  const json& fixture = testing::load_fixture("pool_norm.json");
  int checked = 0;
  for (const json& c : fixture.at("embedding")) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    Tensor indices = tensor(c.at("indices").at("data").get<std::vector<int64_t>>()).reshape(c.at("indices").at("shape").get<Shape>());
    Tensor w = testing::decode_tensor(c.at("weight")).requires_grad_();
    F::EmbeddingFuncOptions o;
    if (!c.at("padding_idx").is_null()) o.padding_idx(c.at("padding_idx").get<int64_t>());
    Tensor y = F::embedding(indices, w, o);
    EXPECT_TRUE(testing::matches_pytorch(name + " output", y, c.at("output")));
    auto g = autograd::grad({(y * testing::decode_tensor(c.at("upstream"))).sum()}, {w});
    EXPECT_TRUE(testing::matches_pytorch(name + " grad weight", g[0], c.at("grad_weight")));
    EXPECT_TRUE(F::embedding(indices.to(kInt32), w, o).equal(y)) << "int32 indices";
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

TEST(EmbeddingModule, InitPaddingRowAndRepr) {
  manual_seed(32);
  nn::Embedding emb(nn::EmbeddingOptions(1000, 8).padding_idx(-1));
  EXPECT_EQ(emb->options.padding_idx(), 999);
  EXPECT_EQ(emb->weight.sizes(), IntArrayRef({1000, 8}));
  EXPECT_TRUE(emb->weight.select(0, 999).equal(zeros({8})));
  EXPECT_NEAR(emb->weight.narrow(0, 0, 999).mean().item<float>(), 0.0, 0.05);
  EXPECT_NEAR(emb->weight.narrow(0, 0, 999).std(true).item<float>(), 1.0, 0.05);
  Tensor y = emb(tensor(std::vector<int64_t>{5, 999, 5}));
  EXPECT_EQ(y.sizes(), IntArrayRef({3, 8}));
  EXPECT_EQ(y.grad_fn() != nullptr, true);
  y.sum().backward();
  EXPECT_TRUE(emb->weight.grad().select(0, 999).equal(zeros({8})));
  EXPECT_TRUE(emb->weight.grad().select(0, 5).equal(full({8}, 2.0)));
  EXPECT_EQ(emb->named_parameters().keys(), std::vector<std::string>{"weight"});

  std::ostringstream os;
  emb->pretty_print(os);
  EXPECT_EQ(os.str(), "Embedding(1000, 8, padding_idx=999)");  // torch 1.13 prints the normalised index
  std::ostringstream plain;
  nn::Embedding(10, 3)->pretty_print(plain);
  EXPECT_EQ(plain.str(), "Embedding(10, 3)");
}

TEST(EmbeddingErrors, NameTheIndex) {
  Tensor w = randn({10, 3});
  EXPECT_THAT(error_of([&] { F::embedding(tensor(std::vector<int64_t>{1, 2, 12, 4}).reshape({2, 2}), w); }),
              HasSubstr("embedding: index 12 is out of range for 10 embeddings (weight [10, 3]), at position [1, 0] of "
                        "indices of shape [2, 2]"));
  EXPECT_THAT(error_of([&] { F::embedding(tensor(std::vector<int64_t>{-1}), w); }),
              HasSubstr("embedding: index -1 is out of range for 10 embeddings"));
  EXPECT_THAT(error_of([&] { F::embedding(randn({2}), w); }),
              HasSubstr("embedding: expected int64 or int32 indices, got float32"));
  EXPECT_THAT(error_of([] { nn::Embedding(nn::EmbeddingOptions(10, 3).padding_idx(10)); }),
              HasSubstr("Embedding: padding_idx must be within num_embeddings (10), got padding_idx=10"));
}

}  // namespace
}  // namespace cohort
