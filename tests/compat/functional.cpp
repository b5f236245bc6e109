// The libtorch-port promise for ATen's free functions (torch::max_pool2d, torch::dropout,
// torch::nll_loss, torch::mse_loss, torch::layer_norm, ...), called with ATen's positional arguments
// as libtorch programs call them. Expected values are worked out by hand (compat.h has the rules).
#include "compat.h"

#include <cmath>

using namespace compat;

namespace {

torch::Tensor grid4() { return torch::arange(16, torch::kFloat32).view({1, 1, 4, 4}); }

// ---------------------------------------------------------------------------------------------------
void pooling_and_convolution() {
  auto x = grid4();
  auto expected_max = torch::tensor({5.0, 7.0, 13.0, 15.0}).view({1, 1, 2, 2});
  check(close(torch::max_pool2d(x, 2), expected_max), "max_pool2d(x, 2)");
  check(close(torch::max_pool2d(x, {2, 2}, {2, 2}), expected_max), "max_pool2d(x, {2, 2}, {2, 2})");
  check(close(torch::avg_pool2d(x, 2), torch::tensor({2.5, 4.5, 10.5, 12.5}).view({1, 1, 2, 2})), "avg_pool2d(x, 2)");
  check(torch::adaptive_avg_pool2d(x, {1, 1}).item<float>() == 7.5f, "adaptive_avg_pool2d(x, {1, 1})");

  auto w = torch::ones({1, 1, 3, 3});
  auto b = torch::full({1}, 0.5);
  auto y = torch::conv2d(x, w, b, /*stride=*/1, /*padding=*/1);
  check(has_sizes(y, {1, 1, 4, 4}), "conv2d(x, w, b, 1, 1): same size");
  check(y[0][0][1][1].item<float>() == 45.5f, "conv2d: the 3x3 sum around (1, 1) plus the bias");
  check(y[0][0][0][0].item<float>() == 10.5f, "conv2d: the corner sees the zero padding");
  check(has_sizes(torch::conv2d(x, w), {1, 1, 2, 2}), "conv2d(x, w): no padding");
}

// ---------------------------------------------------------------------------------------------------
void dropout() {
  auto x = torch::arange(6, torch::kFloat32);
  check(torch::equal(torch::dropout(x, 0.5, /*train=*/false), x), "dropout(x, p, false) is the identity");
  check(torch::equal(torch::dropout(x, 0.0, true), x), "dropout(x, 0, true) is the identity");
  check(torch::dropout(x, 1.0, true).sum().item<float>() == 0.0f, "dropout(x, 1, true) zeroes everything");

  auto ones = torch::ones({4000});
  auto d = torch::dropout(ones, 0.25, true);
  auto zeros = (d == 0).sum().item<int64_t>();
  auto kept = (d == 4.0f / 3.0f).sum().item<int64_t>();
  check(zeros + kept == 4000, "dropout: every element is 0 or 1 / (1 - p)");
  check(zeros > 800 && zeros < 1200, "dropout: about p of the elements are zeroed");

  auto y = torch::ones({10});
  torch::dropout_(y, 0.5, /*train=*/false);
  check(y.sum().item<float>() == 10.0f, "dropout_(y, p, false) leaves y");
}

// ---------------------------------------------------------------------------------------------------
void losses() {
  auto logp = torch::tensor({{-1.0, -2.0}, {-3.0, -4.0}});
  auto target = torch::tensor({0, 1});
  check(torch::nll_loss(logp, target).item<float>() == 2.5f, "nll_loss: mean");
  check(torch::nll_loss(logp, target, {}, torch::Reduction::Sum).item<float>() == 5.0f,
        "nll_loss(logp, t, {}, Reduction::Sum)");
  check(close(torch::nll_loss(logp, target, {}, torch::Reduction::None), torch::tensor({1.0, 4.0})),
        "nll_loss(..., Reduction::None)");
  check(near(torch::nll_loss(logp, target, torch::tensor({1.0, 3.0})).item<double>(), (1.0 + 12.0) / 4.0, 1e-6),
        "nll_loss with class weights divides by the summed weights");

  auto a = torch::tensor({1.0, 2.0, 3.0});
  auto b = torch::tensor({1.0, 1.0, 1.0});
  check(near(torch::mse_loss(a, b).item<double>(), 5.0 / 3.0, 1e-6), "mse_loss: mean");
  check(torch::mse_loss(a, b, torch::Reduction::Sum).item<float>() == 5.0f, "mse_loss(a, b, Reduction::Sum)");
  check(close(torch::mse_loss(a, b, torch::Reduction::None), torch::tensor({0.0, 1.0, 4.0})), "mse_loss: none");
  check(near(torch::l1_loss(a, b).item<double>(), 1.0, 1e-6), "l1_loss");
  check(near(torch::smooth_l1_loss(a, b).item<double>(), 2.0 / 3.0, 1e-6), "smooth_l1_loss (beta 1)");
  check(near(torch::smooth_l1_loss(a, b, torch::Reduction::Mean, 2.0).item<double>(), 1.25 / 3.0, 1e-6),
        "smooth_l1_loss(a, b, Mean, beta 2)");
  check(near(torch::huber_loss(a, b, torch::Reduction::Mean, 2.0).item<double>(), 2.5 / 3.0, 1e-6),
        "huber_loss(a, b, Mean, delta 2)");

  auto p = torch::tensor({0.5, 0.25});
  auto y = torch::tensor({1.0, 0.0});
  check(near(torch::binary_cross_entropy(p, y).item<double>(), -(std::log(0.5) + std::log(0.75)) / 2, 1e-6),
        "binary_cross_entropy");
  auto logits = torch::tensor({0.0, std::log(3.0)});
  check(near(torch::binary_cross_entropy_with_logits(logits, y).item<double>(), -(std::log(0.5) + std::log(0.25)) / 2,
             1e-6),
        "binary_cross_entropy_with_logits");
  check(near(torch::cross_entropy_loss(torch::zeros({1, 2}), torch::tensor({1})).item<double>(), std::log(2.0), 1e-6),
        "cross_entropy_loss: uniform logits");
}

// ---------------------------------------------------------------------------------------------------
void normalization() {
  const double s = 1.0 / std::sqrt(1.0 + 1e-5);
  auto x = torch::tensor({1.0, 3.0}).view({2, 1});
  auto bn = torch::batch_norm(x, {}, {}, {}, {}, /*training=*/true, 0.1, 1e-5, /*cudnn_enabled=*/false);
  check(close(bn, torch::tensor({-s, s}).view({2, 1}), 1e-5), "batch_norm: ATen's nine arguments");

  auto mean = torch::zeros({1}), var = torch::ones({1});
  torch::batch_norm(x, {}, {}, mean, var, true, 0.5, 1e-5, false);
  check(near(mean.item<double>(), 1.0, 1e-6) && near(var.item<double>(), 1.5, 1e-6),
        "batch_norm updates the running statistics (unbiased variance)");

  auto row = torch::tensor({{1.0, 3.0}});
  check(close(torch::layer_norm(row, {2}), torch::tensor({{-s, s}}), 1e-5), "layer_norm(x, {2})");
  auto ln = torch::layer_norm(row, {2}, torch::full({2}, 2.0), torch::full({2}, 1.0), 1e-5);
  check(close(ln, torch::tensor({{1 - 2 * s, 1 + 2 * s}}), 1e-5), "layer_norm with weight and bias");
  check(close(torch::group_norm(x.view({1, 2, 1, 1}), 1), torch::tensor({-s, s}).view({1, 2, 1, 1}), 1e-5),
        "group_norm(x, 1)");
}

// ---------------------------------------------------------------------------------------------------
void activations() {
  auto x = torch::tensor({-2.0, 0.0, 1.0});
  check(close(torch::relu(x), torch::tensor({0.0, 0.0, 1.0})), "relu");
  check(close(torch::leaky_relu(x, 0.2), torch::tensor({-0.4, 0.0, 1.0})), "leaky_relu(x, 0.2)");
  check(close(torch::gelu(x), torch::tensor({-0.04550026, 0.0, 0.84134475}), 1e-6), "gelu");
  check(close(torch::gelu(x, "tanh"), torch::tensor({-0.04540231, 0.0, 0.84119199}), 1e-6), "gelu(x, \"tanh\")");
  check(close(torch::silu(x), torch::tensor({-0.23840584, 0.0, 0.73105858}), 1e-6), "silu");
  check(close(torch::sigmoid(x), torch::tensor({0.11920292, 0.5, 0.73105858}), 1e-6), "sigmoid");
  auto probs = torch::softmax(torch::tensor({{0.0, std::log(3.0)}}), 1);
  check(close(probs, torch::tensor({{0.25, 0.75}}), 1e-6), "softmax(x, 1)");
  check(close(torch::log_softmax(torch::tensor({{0.0, 0.0}}), 1), torch::full({1, 2}, -std::log(2.0)), 1e-6),
        "log_softmax(x, 1)");
  auto y = x.clone();
  torch::relu_(y);
  check(close(y, torch::tensor({0.0, 0.0, 1.0})), "relu_(y)");
}

// ---------------------------------------------------------------------------------------------------
void linear_embedding_one_hot() {
  auto x = torch::tensor({{1.0, 2.0}});
  auto w = torch::tensor({{1.0, 1.0}, {2.0, 0.0}});
  check(close(torch::linear(x, w, torch::tensor({0.5, -1.0})), torch::tensor({{3.5, 1.0}})), "linear(x, w, b)");
  check(close(torch::linear(x, w), torch::tensor({{3.0, 2.0}})), "linear(x, w)");

  auto table = torch::arange(6, torch::kFloat32).view({3, 2});
  auto rows = torch::embedding(table, torch::tensor({2, 0}));
  check(close(rows, torch::tensor({{4.0, 5.0}, {0.0, 1.0}})), "embedding(weight, indices)");

  auto weight = torch::zeros({3, 2}, torch::requires_grad());
  torch::embedding(weight, torch::tensor({1, 1, 2}), -1, /*scale_grad_by_freq=*/true).sum().backward();
  check(close(weight.grad(), torch::tensor({{0.0, 0.0}, {1.0, 1.0}, {1.0, 1.0}})),
        "embedding(..., scale_grad_by_freq): a repeated index's gradient is divided by its count");

  auto oh = torch::one_hot(torch::tensor({0, 2}), 3);
  check(oh.scalar_type() == torch::kInt64 && torch::equal(oh, torch::tensor({{1, 0, 0}, {0, 0, 1}})),
        "one_hot(t, 3)");
  check(has_sizes(torch::one_hot(torch::tensor({1, 4})), {2, 5}), "one_hot(t): classes inferred");
}

// ---------------------------------------------------------------------------------------------------
void gradients() {
  auto a = torch::tensor({1.0, 2.0, 3.0}, torch::requires_grad());
  torch::mse_loss(a, torch::ones({3})).backward();
  check(close(a.grad(), torch::tensor({0.0, 2.0, 4.0}) / 3), "mse_loss backward: 2 (a - b) / n");

  auto z = torch::tensor({{0.0, 0.0}}, torch::requires_grad());
  torch::cross_entropy_loss(z, torch::tensor({1})).backward();
  check(close(z.grad(), torch::tensor({{0.5, -0.5}})), "cross_entropy_loss backward: softmax - one_hot");
}

}  // namespace

int main() {
  section("pooling and convolution", pooling_and_convolution);
  section("dropout", dropout);
  section("losses", losses);
  section("normalization", normalization);
  section("activations", activations);
  section("linear, embedding, one_hot", linear_embedding_one_hot);
  section("gradients", gradients);
  return finish("functional");
}
