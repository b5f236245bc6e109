// The losses nn::functional composes of ops, and huber_loss, against PyTorch 1.13
// (tests/fixtures/losses.json, written by generate_losses.py): values and gradients for every
// reduction, through libtorch's option structs; the modules over them; the errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "cohort/nn/functional/loss.h"
#include "cohort/nn/loss.h"
#include "cohort/ops/creation.h"
#include "support/error_of.h"
#include "support/pytorch_fixture.h"

namespace cohort::testing {
namespace {

namespace F = nn::functional;
using ::testing::HasSubstr;

Reduction reduction_of(const nlohmann::json& options) {
  const std::string r = options.value("reduction", "mean");
  return r == "sum" ? kSum : r == "none" ? kNone : kMean;
}

// The case's function through F:: with its options from the fixture.
Tensor run(const nlohmann::json& c, const std::vector<Tensor>& in) {
  const std::string fn = c.at("fn");
  const nlohmann::json& o = c.at("options");
  const Reduction r = reduction_of(o);
  if (fn == "kl_div") {
    auto options = o.value("reduction", "") == "batchmean" ? F::KLDivFuncOptions(kBatchMean) : F::KLDivFuncOptions(r);
    return F::kl_div(in[0], in[1], options.log_target(o.value("log_target", false)));
  }
  if (fn == "soft_margin_loss") return F::soft_margin_loss(in[0], in[1], F::SoftMarginLossFuncOptions(r));
  if (fn == "margin_ranking_loss")
    return F::margin_ranking_loss(in[0], in[1], in[2], F::MarginRankingLossFuncOptions(r).margin(o.at("margin")));
  if (fn == "hinge_embedding_loss")
    return F::hinge_embedding_loss(in[0], in[1], F::HingeEmbeddingLossFuncOptions(r).margin(o.at("margin")));
  if (fn == "cosine_embedding_loss")
    return F::cosine_embedding_loss(in[0], in[1], in[2],
                                    F::CosineEmbeddingLossFuncOptions(r).margin(o.value("margin", 0.0)));
  if (fn == "poisson_nll_loss")
    return F::poisson_nll_loss(in[0], in[1], F::PoissonNLLLossFuncOptions(r).log_input(o.value("log_input", true))
                                                 .full(o.value("full", false)));
  if (fn == "huber_loss") return F::huber_loss(in[0], in[1], F::HuberLossFuncOptions(r).delta(o.at("delta")));
  ADD_FAILURE() << "no function " << fn;
  return {};
}

TEST(LossFunctions, MatchPytorchValuesAndGradients) {
  const auto& cases = load_fixture("losses.json").at("cases");
  ASSERT_GE(cases.size(), 29u);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.at("fn").get<std::string>() + " " + c.at("options").dump());
    std::vector<Tensor> in;
    for (size_t i = 0; i < c.at("inputs").size(); ++i) {
      in.push_back(decode_tensor(c.at("inputs")[i]));
      if (c.at("grads").contains(std::to_string(i))) in.back().requires_grad_(true);
    }
    const Tensor out = run(c, in);
    EXPECT_TRUE(matches_pytorch("output", out, c.at("output")));
    (out * decode_tensor(c.at("upstream"))).sum().backward();
    for (const auto& [i, grad] : c.at("grads").items())
      EXPECT_TRUE(matches_pytorch("grad of input " + i, in[std::stoul(i)].grad(), grad));
  }
}

TEST(LossFunctions, FuncOptionsSpellingsAndModules) {
  const Tensor x = tensor({0.5, -1.0, 2.0}), y = tensor({1.0, 0.0, 1.5});
  EXPECT_TRUE(F::mse_loss(x, y, F::MSELossFuncOptions(kSum)).equal(F::mse_loss(x, y, kSum)));
  EXPECT_NEAR(F::mse_loss(x, y, kSum).item<double>(), 0.25 + 1.0 + 0.25, 1e-6);
  EXPECT_NEAR(F::l1_loss(x, y, F::L1LossFuncOptions().reduction(kSum)).item<double>(), 2.0, 1e-6);
  // libtorch 1.13 reads beta beside the options, 2.x in them.
  EXPECT_NEAR(F::smooth_l1_loss(x, y, F::SmoothL1LossFuncOptions(kSum), 2.0).item<double>(),
              F::smooth_l1_loss(x, y, F::SmoothL1LossFuncOptions(kSum).beta(2.0)).item<double>(), 1e-6);
  const Tensor p = tensor({0.25, 0.75}), t = tensor({0.0, 1.0});
  EXPECT_NEAR(F::binary_cross_entropy(p, t, F::BinaryCrossEntropyFuncOptions().weight(tensor({1.0, 2.0})))
                  .item<double>(),
              -(std::log(0.75) + 2 * std::log(0.75)) / 2, 1e-6);
  EXPECT_NEAR(F::binary_cross_entropy_with_logits(tensor({0.0}), tensor({1.0}),
                                                  F::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(tensor({3.0})))
                  .item<double>(),
              3 * std::log(2.0), 1e-6);

  nn::KLDivLoss kl{nn::KLDivLossOptions(kBatchMean)};
  const Tensor logq = tensor({-1.0, -0.5}).view({1, 2}), q = tensor({0.5, 0.5}).view({1, 2});
  EXPECT_TRUE(kl(logq, q).equal(F::kl_div(logq, q, F::KLDivFuncOptions(kBatchMean))));
  nn::MarginRankingLoss rank(nn::MarginRankingLossOptions().margin(1.0));
  EXPECT_NEAR(rank(tensor({1.0}), tensor({0.5}), tensor({1.0})).item<double>(), 0.5, 1e-6);
  nn::CosineEmbeddingLoss cosine;
  EXPECT_NEAR(cosine(tensor({1.0, 0.0}), tensor({2.0, 0.0}), tensor(1.0)).item<double>(), 0.0, 1e-9);
  std::ostringstream printed;
  printed << *nn::HuberLoss() << " " << *nn::SoftMarginLoss() << " " << *nn::HingeEmbeddingLoss() << " "
          << *nn::PoissonNLLLoss();
  EXPECT_EQ(printed.str(), "HuberLoss() SoftMarginLoss() HingeEmbeddingLoss() PoissonNLLLoss()");
}

TEST(LossFunctions, ErrorsNameTheLossAndTheShapes) {
  EXPECT_THAT(error_of([] { F::kl_div(zeros({2, 3}), zeros({3, 2})); }),
              HasSubstr("kl_div: input of shape [2, 3] and target of shape [3, 2] differ"));
  EXPECT_THAT(error_of([] { F::kl_div(zeros({}), zeros({}), F::KLDivFuncOptions(kBatchMean)); }),
              HasSubstr("kl_div: kBatchMean needs a batch dimension"));
  EXPECT_THAT(error_of([] { F::margin_ranking_loss(zeros({3}), zeros({3}), zeros({2})); }),
              HasSubstr("margin_ranking_loss: input1 of shape [3] and target of shape [2] differ"));
  EXPECT_THAT(error_of([] { F::cosine_embedding_loss(zeros({2, 3}), zeros({2, 3}), zeros({3})); }),
              HasSubstr("cosine_embedding_loss: expected a target of shape [2] for inputs [2, 3], got [3]"));
  EXPECT_THAT(error_of([] { F::cosine_embedding_loss(zeros({1, 2, 3}), zeros({1, 2, 3}), zeros({1})); }),
              HasSubstr("cosine_embedding_loss: expected inputs [N, D] or [D], got [1, 2, 3]"));
}

}  // namespace
}  // namespace cohort::testing
