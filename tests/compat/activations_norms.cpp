// The activation and normalisation layers libtorch programs use beyond ReLU and BatchNorm: ELU,
// SELU, CELU, ReLU6, Hardtanh, Softplus, Mish, PReLU, RReLU, GLU, the shrinks, Threshold, LogSigmoid,
// Softsign, Tanhshrink, Softmin and Softmax2d as modules, nn::functional calls with their FuncOptions
// (in place too) and ATen's free functions (torch::hardswish, torch::elu_...); InstanceNorm1d/2d,
// F::instance_norm, F::normalize, cosine similarity, pairwise distance and local response norm.
// Expected values are worked out by hand or by a second computation (compat.h has the rules).
#include "compat.h"

using namespace compat;
namespace F = torch::nn::functional;

namespace {

torch::Tensor sample() { return torch::tensor({-4.0, -2.5, -1.0, -0.25, 0.5, 1.5, 3.5, 7.0}, torch::kDouble); }

// ---------------------------------------------------------------------------------------------------
void activation_modules() {
  auto x = sample();
  auto neg = x.clamp_max(0), pos = x.clamp_min(0);
  torch::nn::ELU elu(torch::nn::ELUOptions().alpha(0.5));
  check(close(elu(x), pos + 0.5 * (torch::exp(neg) - 1), 1e-12), "ELU(alpha=0.5)");
  const double scale = 1.0507009873554804934, alpha = 1.6732632423543772848;
  check(close(torch::nn::SELU()(x), scale * (pos + alpha * (torch::exp(neg) - 1)), 1e-12), "SELU");
  torch::nn::CELU celu(torch::nn::CELUOptions().alpha(2.0));
  check(close(celu(x), pos + 2.0 * (torch::exp(neg / 2.0) - 1), 1e-12), "CELU(alpha=2)");
  check(close(torch::nn::ReLU6()(x), x.clamp(0, 6)), "ReLU6");
  torch::nn::Hardtanh hardtanh(torch::nn::HardtanhOptions().min_val(-2).max_val(3));
  check(close(hardtanh(x), x.clamp(-2, 3)), "Hardtanh(-2, 3)");
  torch::nn::Softplus softplus(torch::nn::SoftplusOptions().beta(2).threshold(5));
  auto smooth = torch::log1p(torch::exp(2 * x)) / 2;
  check(close(softplus(x), torch::where(2 * x > 5, x, smooth), 1e-12), "Softplus(beta=2, threshold=5)");
  check(close(torch::nn::Mish()(x), x * torch::tanh(torch::log1p(torch::exp(x))), 1e-12), "Mish");
  check(close(torch::nn::LogSigmoid()(x), torch::log(torch::sigmoid(x)), 1e-12), "LogSigmoid");
  check(close(torch::nn::Softsign()(x), x / (1 + x.abs()), 1e-12), "Softsign");
  check(close(torch::nn::Tanhshrink()(x), x - torch::tanh(x), 1e-12), "Tanhshrink");
  check(close(torch::nn::Softshrink(1.0)(x),
              torch::tensor({-3.0, -1.5, 0.0, 0.0, 0.0, 0.5, 2.5, 6.0}, torch::kDouble)), "Softshrink(1)");
  check(close(torch::nn::Hardshrink(torch::nn::HardshrinkOptions(1.0))(x),
              torch::tensor({-4.0, -2.5, 0.0, 0.0, 0.0, 1.5, 3.5, 7.0}, torch::kDouble)), "Hardshrink(1)");
  torch::nn::Threshold threshold(0.5, -9.0);
  check(close(threshold(x), torch::tensor({-9.0, -9.0, -9.0, -9.0, -9.0, 1.5, 3.5, 7.0}, torch::kDouble)),
        "Threshold(0.5, -9): x <= threshold takes value");
  check(close(torch::nn::Softmin(0)(x), torch::softmax(-x, 0), 1e-12), "Softmin(0)");
  auto maps = x.view({2, 2, 2});
  check(close(torch::nn::Softmax2d()(maps), torch::softmax(maps, 0), 1e-12), "Softmax2d on [C, H, W]");

  // Hand-worked hardswish / hardsigmoid at the points that tell the pieces apart.
  auto h = torch::tensor({-4.0, -1.5, 0.0, 1.5, 4.0}, torch::kDouble);
  check(close(torch::hardsigmoid(h), torch::tensor({0.0, 0.25, 0.5, 0.75, 1.0}, torch::kDouble)), "hardsigmoid");
  check(close(torch::hardswish(h), torch::tensor({0.0, -0.375, 0.0, 1.125, 4.0}, torch::kDouble)), "hardswish");

  // GLU halves a dim: the first half gated by the sigmoid of the second.
  auto g = x.view({2, 4});
  auto gated = g.narrow(1, 0, 2) * torch::sigmoid(g.narrow(1, 2, 2));
  check(close(torch::nn::GLU()(g), gated, 1e-12), "GLU (dim -1)");
  check(close(F::glu(g, F::GLUFuncOptions(0)), g.narrow(0, 0, 1) * torch::sigmoid(g.narrow(0, 1, 1)), 1e-12),
        "F::glu along dim 0");
  check(close(torch::glu(g, 1), gated, 1e-12), "torch::glu");

  // RReLU: in evaluation the negative slope is (lower + upper) / 2; in training one slope per
  // element, drawn from [lower, upper].
  torch::nn::RReLU rrelu(torch::nn::RReLUOptions().lower(0.1).upper(0.3));
  auto leaky = torch::where(x > 0, x, 0.2 * x);
  auto slopes = (rrelu(x) / x).slice(0, 0, 4);
  check((slopes >= 0.1).all().item<bool>() && (slopes <= 0.3).all().item<bool>(), "RReLU in training: slopes in range");
  rrelu->eval();
  check(close(rrelu(x), leaky, 1e-12), "RReLU in evaluation");
  check(close(F::rrelu(x, F::RReLUFuncOptions().lower(0.1).upper(0.3)), leaky, 1e-12), "F::rrelu (not training)");
  check(close(torch::rrelu(x, 0.1, 0.3, false), leaky, 1e-12), "torch::rrelu (not training)");

  // The modules sit in a Sequential like any other.
  torch::nn::Sequential seq(torch::nn::Linear(3, 4), torch::nn::ELU(), torch::nn::Linear(4, 4), torch::nn::Mish(),
                            torch::nn::Linear(4, 2), torch::nn::LogSoftmax(1));
  auto out = seq->forward(torch::ones({5, 3}));
  check(has_sizes(out, {5, 2}) && close(out.exp().sum(1), torch::ones({5}), 1e-5), "Sequential with ELU and Mish");
}

// ---------------------------------------------------------------------------------------------------
void prelu() {
  torch::nn::PReLU prelu(torch::nn::PReLUOptions().num_parameters(3));
  auto params = prelu->named_parameters();
  check(params.size() == 1 && params.contains("weight"), "PReLU: one parameter, weight");
  check(close(prelu->weight, torch::full({3}, 0.25)), "PReLU: weight starts at init (0.25)");
  {
    torch::NoGradGuard no_grad;
    prelu->weight.copy_(torch::tensor({0.5f, 1.5f, 2.0f}));
  }
  auto x = torch::tensor({-1.f, 2.f, -3.f, 4.f, -5.f, -6.f}).view({2, 3});
  auto y = prelu(x);
  check(close(y, torch::tensor({-0.5f, 2.f, -6.f, 4.f, -7.5f, -12.f}).view({2, 3})), "PReLU: one slope per channel");
  y.sum().backward();
  check(close(prelu->weight.grad(), torch::tensor({-1.f, -5.f, -9.f})), "PReLU: weight gradient");
  check(close(F::prelu(x, torch::full({1}, 0.1f)), torch::where(x > 0, x, 0.1 * x)), "F::prelu with one weight");
  check(close(torch::prelu(x, torch::full({1}, 0.1f)), torch::where(x > 0, x, 0.1 * x)), "torch::prelu");
}

// ---------------------------------------------------------------------------------------------------
void activation_functions() {
  auto x = sample();
  check(close(F::elu(x, F::ELUFuncOptions().alpha(2.0)), torch::elu(x, 2.0)), "F::elu");
  check(close(F::selu(x), torch::selu(x)), "F::selu");
  check(close(F::celu(x, F::CELUFuncOptions().alpha(0.5)), torch::celu(x, 0.5)), "F::celu");
  check(close(F::relu6(x), torch::relu6(x)), "F::relu6");
  check(close(F::hardtanh(x, F::HardtanhFuncOptions().min_val(-0.5).max_val(0.5)), torch::hardtanh(x, -0.5, 0.5)),
        "F::hardtanh");
  check(close(F::softplus(x, F::SoftplusFuncOptions().beta(0.5)), torch::softplus(x, 0.5)), "F::softplus");
  check(close(F::mish(x), torch::mish(x)), "F::mish");
  check(close(F::logsigmoid(x), torch::log_sigmoid(x)), "F::logsigmoid");
  check(close(F::softshrink(x, F::SoftshrinkFuncOptions(0.75)), torch::softshrink(x, 0.75)), "F::softshrink");
  check(close(F::hardshrink(x, F::HardshrinkFuncOptions().lambda(0.75)), torch::hardshrink(x, 0.75)), "F::hardshrink");
  check(close(F::threshold(x, F::ThresholdFuncOptions(1.0, 0.0)), torch::threshold(x, 1.0, 0.0)), "F::threshold");
  check(close(F::leaky_relu(x, F::LeakyReLUFuncOptions().negative_slope(0.2)), torch::where(x > 0, x, 0.2 * x)),
        "F::leaky_relu with options");
  check(close(F::gelu(x, F::GELUFuncOptions().approximate("tanh")), torch::gelu(x, "tanh")), "F::gelu with options");
  auto logits = x.view({2, 4}).to(torch::kFloat);
  check(F::softmax(logits, F::SoftmaxFuncOptions(1).dtype(torch::kDouble)).dtype() == torch::kDouble,
        "F::softmax computes in the dtype asked for");
  check(close(F::log_softmax(logits, F::LogSoftmaxFuncOptions(1)), torch::log_softmax(logits, 1)),
        "F::log_softmax with options");
  check(close(F::softmin(logits, F::SoftminFuncOptions(1)), torch::softmax(-logits, 1)), "F::softmin");

  // In place: the result is written into the argument, which is returned.
  auto y = x.clone();
  auto r = F::elu(y, F::ELUFuncOptions().inplace(true));
  check(close(y, torch::elu(x)) && r.data_ptr() == y.data_ptr(), "F::elu in place");
  y = x.clone();
  F::relu6(y, F::ReLU6FuncOptions(true));
  check(close(y, x.clamp(0, 6)), "F::relu6 in place");
  y = x.clone();
  F::hardtanh(y, F::HardtanhFuncOptions().inplace(true));
  check(close(y, x.clamp(-1, 1)), "F::hardtanh in place");
  y = x.clone();
  torch::nn::Threshold(torch::nn::ThresholdOptions(0.0, 1.0).inplace(true))(y);
  check(close(y, torch::where(x > 0, x, torch::ones_like(x))), "Threshold in place");
  y = x.clone();
  torch::elu_(y, 1.0);
  torch::selu_(y);
  check(close(y, torch::selu(torch::elu(x))), "torch::elu_ then torch::selu_");
  y = x.clone();
  torch::hardtanh_(y, -2, 2);
  torch::threshold_(y, 0.0, 5.0);
  check(close(y, torch::threshold(x.clamp(-2, 2), 0.0, 5.0)), "torch::hardtanh_ then torch::threshold_");

  // Gradients: elu's slope is exp(x) below 0, softplus's is sigmoid(beta x).
  auto leaf = sample().requires_grad_();
  torch::elu(leaf).sum().backward();
  check(close(leaf.grad(), torch::where(sample() > 0, torch::ones_like(sample()), torch::exp(sample())), 1e-12),
        "elu backward");
  leaf.grad().zero_();
  torch::softplus(leaf, 2.0, 30.0).sum().backward();
  check(close(leaf.grad(), torch::sigmoid(2 * sample()), 1e-12), "softplus backward");
}

// ---------------------------------------------------------------------------------------------------
void instance_norm() {
  auto x = torch::arange(24, torch::kDouble).view({2, 3, 4}).pow(2) / 10;
  torch::nn::InstanceNorm1d in1(3);
  auto y = in1(x);
  check(close(y.mean(2), torch::zeros({2, 3}, torch::kDouble), 1e-9), "InstanceNorm1d: each instance has mean 0");
  check(close(y.var(2, /*unbiased=*/false), torch::ones({2, 3}, torch::kDouble), 1e-4),
        "InstanceNorm1d: each instance has variance 1 (up to eps)");
  check(in1->named_parameters().size() == 0 && in1->named_buffers().size() == 0,
        "InstanceNorm1d: no parameters or buffers by default");

  // The same as normalising each row by hand.
  auto mean = x.mean(2, true), var = x.var(2, false, true);
  auto manual = (x - mean) / torch::sqrt(var + 1e-5);
  check(close(F::instance_norm(x, F::InstanceNormFuncOptions()), manual, 1e-12), "F::instance_norm");
  auto w = torch::tensor({1.0, 2.0, 3.0}, torch::kDouble), b = torch::tensor({0.5, 0.0, -0.5}, torch::kDouble);
  check(close(F::instance_norm(x, F::InstanceNormFuncOptions().weight(w).bias(b)),
              manual * w.view({1, 3, 1}) + b.view({1, 3, 1}), 1e-12),
        "F::instance_norm with weight and bias");

  torch::nn::InstanceNorm2d in2(torch::nn::InstanceNorm2dOptions(3).affine(true).track_running_stats(true).momentum(0.5));
  auto keys = in2->named_parameters().keys();
  check(keys.size() == 2 && keys[0] == "weight" && keys[1] == "bias", "InstanceNorm2d(affine): weight and bias");
  check(in2->named_buffers().size() == 3, "InstanceNorm2d(track_running_stats): three buffers");
  auto x4 = x.view({2, 3, 2, 2}).to(torch::kFloat);
  in2->to(torch::kFloat);
  in2(x4);
  // running = (1 - momentum) running + momentum * (the mean over samples of each one's statistics),
  // the variance unbiased (4 values per instance).
  auto m4 = x4.mean({2, 3}).mean(0), v4 = x4.var({2, 3}, /*unbiased=*/true).mean(0);
  check(close(in2->running_mean, 0.5 * m4, 1e-5), "InstanceNorm2d: running_mean after one step");
  check(close(in2->running_var, 0.5 + 0.5 * v4, 1e-5), "InstanceNorm2d: running_var after one step");
  in2->eval();
  auto e = in2(x4);
  auto want = (x4 - in2->running_mean.view({1, 3, 1, 1})) / torch::sqrt(in2->running_var.view({1, 3, 1, 1}) + 1e-5);
  check(close(e, want, 1e-5), "InstanceNorm2d in eval uses the running statistics");
  check(has_sizes(torch::nn::InstanceNorm1d(3)(torch::ones({3, 5}) * torch::arange(5)), {3, 5}),
        "InstanceNorm1d takes an unbatched [C, L] input");
}

// ---------------------------------------------------------------------------------------------------
void distances() {
  auto a = torch::tensor({{3.0, 4.0}, {1.0, 0.0}}, torch::kDouble);
  auto b = torch::tensor({{4.0, 3.0}, {0.0, 2.0}}, torch::kDouble);
  check(close(F::normalize(a, F::NormalizeFuncOptions().dim(1)),
              torch::tensor({{0.6, 0.8}, {1.0, 0.0}}, torch::kDouble)), "F::normalize (p 2, dim 1)");
  check(close(F::normalize(a, F::NormalizeFuncOptions().p(1).dim(0)),
              torch::tensor({{0.75, 1.0}, {0.25, 0.0}}, torch::kDouble)), "F::normalize (p 1, dim 0)");
  check(close(F::cosine_similarity(a, b, F::CosineSimilarityFuncOptions().dim(1)),
              torch::tensor({24.0 / 25.0, 0.0}, torch::kDouble)), "F::cosine_similarity");
  torch::nn::CosineSimilarity cos(torch::nn::CosineSimilarityOptions().dim(0));
  check(close(cos(a, b), torch::tensor({12.0 / (std::sqrt(10.0) * 4.0), 12.0 / (std::sqrt(16.0) * std::sqrt(13.0))},
                                       torch::kDouble)), "nn::CosineSimilarity(dim 0)");
  // eps is added to the difference before the norm: ||a - b + eps||.
  const double e = 1e-6;
  auto d = torch::tensor({std::hypot(-1.0 + e, 1.0 + e), std::hypot(1.0 + e, -2.0 + e)}, torch::kDouble);
  check(close(F::pairwise_distance(a, b), d, 1e-12), "F::pairwise_distance");
  torch::nn::PairwiseDistance l1(torch::nn::PairwiseDistanceOptions().p(1).eps(0).keepdim(true));
  check(close(l1(a, b), torch::tensor({{2.0}, {3.0}}, torch::kDouble)), "nn::PairwiseDistance(p 1, keepdim)");

  // Local response norm over channels: x / (k + alpha / size * sum of squares in the window)^beta.
  auto x = torch::tensor({1.0, 2.0, 3.0}, torch::kDouble).view({1, 3, 1});
  torch::nn::LocalResponseNorm lrn(torch::nn::LocalResponseNormOptions(2).alpha(1.0).beta(1.0).k(1.0));
  // size 2: the window of channel c is c - 1 and c (zeros before the first).
  auto want = torch::tensor({1.0 / (1 + 0.5), 2.0 / (1 + 2.5), 3.0 / (1 + 6.5)}, torch::kDouble).view({1, 3, 1});
  check(close(lrn(x), want, 1e-12), "nn::LocalResponseNorm(2)");
  check(close(F::local_response_norm(x, F::LocalResponseNormFuncOptions(2).alpha(1.0).beta(1.0)), want, 1e-12),
        "F::local_response_norm");
}

}  // namespace

int main() {
  section("activation modules", activation_modules);
  section("PReLU", prelu);
  section("activation functions", activation_functions);
  section("instance norm", instance_norm);
  section("normalize and distances", distances);
  return finish("activations_norms");
}
