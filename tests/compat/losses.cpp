// The losses as libtorch programs write them: nn::functional with its *FuncOptions and the loss
// modules with their *Options, reductions as torch::kSum / kNone / kBatchMean. Expected values are
// worked out by hand (compat.h has the rules).
#include "compat.h"

#include <cmath>

using namespace compat;
namespace F = torch::nn::functional;

namespace {

void func_options() {
  auto x = torch::tensor({0.5, -1.0, 2.0});
  auto y = torch::tensor({1.0, 0.0, 1.5});
  check(near(F::mse_loss(x, y, F::MSELossFuncOptions(torch::kSum)).item<double>(), 1.5, 1e-6),
        "mse_loss with MSELossFuncOptions(kSum)");
  check(near(F::l1_loss(x, y, F::L1LossFuncOptions().reduction(torch::kSum)).item<double>(), 2.0, 1e-6),
        "l1_loss with L1LossFuncOptions().reduction(kSum)");
  check(has_sizes(F::l1_loss(x, y, F::L1LossFuncOptions(torch::kNone)), {3}), "l1_loss kNone keeps the shape");
  // |d| = 0.5, 1, 0.5 against delta 0.5: 0.125, 0.5 * (1 - 0.25), 0.125.
  check(near(F::huber_loss(x, y, F::HuberLossFuncOptions().delta(0.5).reduction(torch::kSum)).item<double>(),
             0.125 + 0.375 + 0.125, 1e-6),
        "huber_loss with delta 0.5");
  auto p = torch::tensor({0.25, 0.75});
  auto t = torch::tensor({0.0, 1.0});
  check(near(F::binary_cross_entropy(p, t, F::BinaryCrossEntropyFuncOptions().weight(torch::tensor({1.0, 2.0})))
                 .item<double>(),
             -3 * std::log(0.75) / 2, 1e-6),
        "binary_cross_entropy with a weight");
  check(near(F::binary_cross_entropy_with_logits(torch::zeros({1}), torch::ones({1}),
                                                 F::BinaryCrossEntropyWithLogitsFuncOptions().pos_weight(
                                                     torch::full({1}, 3.0)))
                 .item<double>(),
             3 * std::log(2.0), 1e-6),
        "binary_cross_entropy_with_logits with pos_weight 3");
}

void divergence_and_margins() {
  // KL(q || p) over two rows: log p = log(0.5) everywhere, q one-hot and uniform.
  auto logp = torch::full({2, 2}, std::log(0.5));
  auto q = torch::tensor({{1.0, 0.0}, {0.5, 0.5}});
  const double row0 = std::log(1.0) - std::log(0.5), row1 = 0.0;
  check(near(F::kl_div(logp, q, F::KLDivFuncOptions(torch::kBatchMean)).item<double>(), (row0 + row1) / 2, 1e-6),
        "kl_div kBatchMean: the sum over the batch size");
  check(near(F::kl_div(logp, q, F::KLDivFuncOptions(torch::kSum)).item<double>(), row0 + row1, 1e-6),
        "kl_div kSum (a zero probability counts 0)");
  check(near(F::kl_div(logp, torch::log(torch::full({2, 2}, 0.5)), F::KLDivFuncOptions(torch::kSum).log_target(true))
                 .item<double>(),
             0.0, 1e-6),
        "kl_div log_target: equal distributions give 0");
  check(near(F::soft_margin_loss(torch::zeros({2}), torch::tensor({1.0, -1.0})).item<double>(), std::log(2.0), 1e-6),
        "soft_margin_loss at 0: log 2");
  check(near(F::margin_ranking_loss(torch::tensor({1.0, 0.0}), torch::tensor({0.5, 0.0}), torch::tensor({1.0, -1.0}),
                                    F::MarginRankingLossFuncOptions().margin(1.0).reduction(torch::kSum))
                 .item<double>(),
             0.5 + 1.0, 1e-6),
        "margin_ranking_loss with margin 1");
  check(near(F::hinge_embedding_loss(torch::tensor({0.3, 0.3}), torch::tensor({1.0, -1.0}),
                                     F::HingeEmbeddingLossFuncOptions().reduction(torch::kSum))
                 .item<double>(),
             0.3 + 0.7, 1e-6),
        "hinge_embedding_loss: x where y is 1, 1 - x where y is -1");
  check(near(F::cosine_embedding_loss(torch::tensor({{1.0, 0.0}}), torch::tensor({{0.0, 1.0}}), torch::tensor({1.0}))
                 .item<double>(),
             1.0, 1e-6),
        "cosine_embedding_loss of orthogonal rows labelled similar: 1");
  check(near(F::poisson_nll_loss(torch::zeros({2}), torch::tensor({1.0, 2.0})).item<double>(), 1.0, 1e-6),
        "poisson_nll_loss at log rate 0: exp(0) - y * 0");
}

void modules() {
  torch::nn::KLDivLoss kl(torch::nn::KLDivLossOptions(torch::kBatchMean));
  auto logp = torch::full({2, 2}, std::log(0.5));
  auto q = torch::full({2, 2}, 0.5);
  check(near(kl(logp, q).item<double>(), 0.0, 1e-6), "nn::KLDivLoss(kBatchMean)");
  torch::nn::MarginRankingLoss rank(torch::nn::MarginRankingLossOptions().margin(1.0));
  check(near(rank(torch::tensor({1.0}), torch::tensor({0.5}), torch::tensor({1.0})).item<double>(), 0.5, 1e-6),
        "nn::MarginRankingLoss(margin 1)");
  torch::nn::HuberLoss huber(torch::nn::HuberLossOptions().delta(2.0));
  check(near(huber(torch::tensor({3.0}), torch::tensor({0.0})).item<double>(), 2.0 * (3.0 - 1.0), 1e-6),
        "nn::HuberLoss(delta 2)");
  torch::nn::CosineEmbeddingLoss cosine(torch::nn::CosineEmbeddingLossOptions().margin(0.5));
  check(near(cosine(torch::tensor({{1.0, 0.0}}), torch::tensor({{1.0, 0.0}}), torch::tensor({-1.0})).item<double>(),
             0.5, 1e-6),
        "nn::CosineEmbeddingLoss: equal rows labelled dissimilar give cos - margin");
  torch::nn::SoftMarginLoss soft;
  torch::nn::HingeEmbeddingLoss hinge;
  torch::nn::PoissonNLLLoss poisson;
  check(near(soft(torch::zeros({1}), torch::ones({1})).item<double>(), std::log(2.0), 1e-6), "nn::SoftMarginLoss");
  check(near(hinge(torch::zeros({1}), -torch::ones({1})).item<double>(), 1.0, 1e-6), "nn::HingeEmbeddingLoss");
  check(near(poisson(torch::zeros({1}), torch::ones({1})).item<double>(), 1.0, 1e-6), "nn::PoissonNLLLoss");
}

}  // namespace

int main() {
  section("*FuncOptions", func_options);
  section("divergence and margins", divergence_and_margins);
  section("modules", modules);
  return finish("losses");
}
