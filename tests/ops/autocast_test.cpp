// Autocast against PyTorch 1.13's CPU autocast (tests/fixtures/autocast.json, written by
// generate_autocast.py): which dtype every op runs in, op by op and for float32, bfloat16, mixed and
// float64 inputs; forward values and float32 gradients of conv2d, linear, batch norm after a
// convolution and the blitz CNN within bfloat16's tolerance. Then what PyTorch leaves implicit: the
// state is per thread and restored, the cast cache (once per region, remade after an in-place
// update, never a graphless cast under grad mode), float64 untouched, DataParallel replicas and the
// backward engine's workers cast as their caller, float16, libtorch's names.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <iostream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "cohort/autograd/engine.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/autograd/node.h"
#include "cohort/nn/attention.h"
#include "cohort/nn/linear.h"
#include "cohort/nn/normalization.h"
#include "cohort/nn/rnn.h"
#include "cohort/nn/transformer.h"
#include "cohort/parallel/data_parallel.h"
#include "cohort/ops/activation.h"
#include "cohort/ops/autocast.h"
#include "cohort/ops/convolution.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/dropout.h"
#include "cohort/ops/embedding.h"
#include "cohort/ops/indexing.h"
#include "cohort/ops/interpolate.h"
#include "cohort/ops/linalg.h"
#include "cohort/ops/loss.h"
#include "cohort/ops/normalization.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/pooling.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"
#include "cohort/ops/sorting.h"
#include "support/devices.h"
#include "support/error_of.h"
#include "support/pytorch_fixture.h"

namespace cohort::testing {
namespace {

using nlohmann::json;
using In = std::vector<Tensor>;

Tensor idx(std::vector<int64_t> v) { return tensor(v, kInt64); }

// The cases of generate_autocast.py's CASES, in its order and with its inputs.
struct Case {
  std::string name;
  std::vector<Shape> shapes;
  std::function<Tensor(const In&)> op;
};

std::vector<Case> cases() {
  return {
      {"abs", {{2, 3}}, [](const In& x) { return abs(x[0]); }},
      {"exp", {{2, 3}}, [](const In& x) { return exp(x[0]); }},
      {"log", {{2, 3}}, [](const In& x) { return log(x[0]); }},
      {"sin", {{2, 3}}, [](const In& x) { return sin(x[0]); }},
      {"tanh", {{2, 3}}, [](const In& x) { return tanh(x[0]); }},
      {"sigmoid", {{2, 3}}, [](const In& x) { return sigmoid(x[0]); }},
      {"sqrt", {{2, 3}}, [](const In& x) { return sqrt(x[0]); }},
      {"rsqrt", {{2, 3}}, [](const In& x) { return rsqrt(x[0]); }},
      {"erf", {{2, 3}}, [](const In& x) { return erf(x[0]); }},
      {"pow_scalar", {{2, 3}}, [](const In& x) { return pow(x[0], 2.0); }},
      {"relu", {{2, 3}}, [](const In& x) { return relu(x[0]); }},
      {"gelu", {{2, 3}}, [](const In& x) { return gelu(x[0]); }},
      {"silu", {{2, 3}}, [](const In& x) { return silu(x[0]); }},
      {"leaky_relu", {{2, 3}}, [](const In& x) { return leaky_relu(x[0], 0.1); }},
      {"add", {{2, 3}, {2, 3}}, [](const In& x) { return x[0] + x[1]; }},
      {"mul", {{2, 3}, {2, 3}}, [](const In& x) { return x[0] * x[1]; }},
      {"div", {{2, 3}, {2, 3}}, [](const In& x) { return x[0] / x[1]; }},
      {"maximum", {{2, 3}, {2, 3}}, [](const In& x) { return maximum(x[0], x[1]); }},
      {"mul_scalar", {{2, 3}}, [](const In& x) { return x[0] * 2.5; }},
      {"lt", {{2, 3}, {2, 3}}, [](const In& x) { return x[0] < x[1]; }},
      {"where", {{2, 3}, {2, 3}}, [](const In& x) { return where(x[0] > 2, x[0], x[1]); }},
      {"masked_fill", {{2, 3}}, [](const In& x) { return masked_fill(x[0], x[0] > 2, 0.0); }},
      {"clamp", {{2, 3}}, [](const In& x) { return clamp(x[0], Scalar(1.0), Scalar(3.0)); }},
      {"dropout_eval", {{2, 3}}, [](const In& x) { return dropout(x[0], 0.5, false); }},
      {"sum", {{2, 3}}, [](const In& x) { return sum(x[0]); }},
      {"sum_dim", {{2, 3}}, [](const In& x) { return sum(x[0], {1}); }},
      {"mean", {{2, 3}}, [](const In& x) { return mean(x[0]); }},
      {"prod", {{2, 3}}, [](const In& x) { return prod(x[0]); }},
      {"amax", {{2, 3}}, [](const In& x) { return amax(x[0], {1}); }},
      {"max", {{2, 3}}, [](const In& x) { return max(x[0]); }},
      {"std", {{2, 3}}, [](const In& x) { return std(x[0], IntArrayRef{}); }},
      {"var", {{2, 3}}, [](const In& x) { return var(x[0], {1}); }},
      {"norm", {{2, 3}}, [](const In& x) { return norm(x[0]); }},
      {"logsumexp", {{2, 3}}, [](const In& x) { return logsumexp(x[0], {1}); }},
      {"cumsum", {{2, 3}}, [](const In& x) { return cumsum(x[0], 1); }},
      {"softmax", {{2, 3}}, [](const In& x) { return softmax(x[0], 1); }},
      {"log_softmax", {{2, 3}}, [](const In& x) { return log_softmax(x[0], 1); }},
      {"argmax", {{2, 3}}, [](const In& x) { return argmax(x[0], 1); }},
      {"sort", {{2, 3}}, [](const In& x) { return std::get<0>(sort(x[0], 1)); }},
      {"topk", {{2, 3}}, [](const In& x) { return std::get<0>(topk(x[0], 2)); }},
      {"mm", {{2, 3}, {3, 4}}, [](const In& x) { return mm(x[0], x[1]); }},
      {"bmm", {{2, 2, 3}, {2, 3, 4}}, [](const In& x) { return bmm(x[0], x[1]); }},
      {"matmul", {{2, 3}, {3, 4}}, [](const In& x) { return matmul(x[0], x[1]); }},
      {"matmul_batched", {{2, 2, 3}, {3, 4}}, [](const In& x) { return matmul(x[0], x[1]); }},
      {"addmm", {{4}, {2, 3}, {3, 4}}, [](const In& x) { return addmm(x[0], x[1], x[2]); }},
      {"baddbmm", {{2, 2, 4}, {2, 2, 3}, {2, 3, 4}}, [](const In& x) { return baddbmm(x[0], x[1], x[2]); }},
      {"dot", {{3}, {3}}, [](const In& x) { return dot(x[0], x[1]); }},
      {"outer", {{3}, {4}}, [](const In& x) { return outer(x[0], x[1]); }},
      {"einsum", {{2, 3}, {3, 4}}, [](const In& x) { return einsum("ij,jk->ik", {x[0], x[1]}); }},
      {"linear", {{2, 3}, {4, 3}, {4}}, [](const In& x) { return linear(x[0], x[1], x[2]); }},
      {"linear_no_bias", {{2, 3}, {4, 3}}, [](const In& x) { return linear(x[0], x[1]); }},
      {"tril", {{3, 3}}, [](const In& x) { return tril(x[0]); }},
      {"conv1d", {{1, 2, 6}, {3, 2, 3}, {3}}, [](const In& x) { return conv1d(x[0], x[1], x[2]); }},
      {"conv2d", {{1, 2, 5, 5}, {3, 2, 3, 3}, {3}}, [](const In& x) { return conv2d(x[0], x[1], x[2]); }},
      {"conv_transpose2d", {{1, 2, 4, 4}, {2, 3, 3, 3}}, [](const In& x) { return conv_transpose2d(x[0], x[1]); }},
      {"max_pool2d", {{1, 2, 4, 4}}, [](const In& x) { return max_pool2d(x[0], 2); }},
      {"avg_pool2d", {{1, 2, 4, 4}}, [](const In& x) { return avg_pool2d(x[0], 2); }},
      {"adaptive_avg_pool2d", {{1, 2, 4, 4}}, [](const In& x) { return adaptive_avg_pool2d(x[0], 1); }},
      {"batch_norm", {{2, 3, 2, 2}, {3}, {3}},
       [](const In& x) { return batch_norm(x[0], x[1], x[2], {}, {}, true, 0.1, 1e-5); }},
      {"layer_norm", {{2, 3}}, [](const In& x) { return layer_norm(x[0], {3}); }},
      {"layer_norm_affine", {{2, 3}, {3}, {3}}, [](const In& x) { return layer_norm(x[0], {3}, x[1], x[2]); }},
      {"group_norm", {{2, 4, 2}}, [](const In& x) { return group_norm(x[0], 2); }},
      {"embedding", {{5, 3}}, [](const In& x) { return embedding(x[0], idx({1, 4})); }},
      {"interpolate_bilinear", {{1, 1, 2, 2}},
       [](const In& x) { return upsample_bilinear2d(x[0], {4, 4}, false, 2.0, 2.0); }},
      {"nll_loss", {{2, 3}}, [](const In& x) { return nll_loss(x[0], idx({0, 2})); }},
      {"cross_entropy", {{2, 3}}, [](const In& x) { return cross_entropy_loss(x[0], idx({0, 2})); }},
      {"mse_loss", {{2, 3}, {2, 3}}, [](const In& x) { return mse_loss(x[0], x[1]); }},
      {"l1_loss", {{2, 3}, {2, 3}}, [](const In& x) { return l1_loss(x[0], x[1]); }},
      {"smooth_l1_loss", {{2, 3}, {2, 3}}, [](const In& x) { return smooth_l1_loss(x[0], x[1]); }},
      {"huber_loss", {{2, 3}, {2, 3}}, [](const In& x) { return huber_loss(x[0], x[1]); }},
      {"binary_cross_entropy", {{2, 3}, {2, 3}},
       [](const In& x) { return binary_cross_entropy(sigmoid(x[0]), sigmoid(x[1])); }},
      {"binary_cross_entropy_with_logits", {{2, 3}, {2, 3}},
       [](const In& x) { return binary_cross_entropy_with_logits(x[0], sigmoid(x[1])); }},
      {"cat", {{2, 3}, {2, 3}}, [](const In& x) { return cat({x[0], x[1]}); }},
      {"stack", {{2, 3}, {2, 3}}, [](const In& x) { return stack({x[0], x[1]}); }},
      {"reshape", {{2, 3}}, [](const In& x) { return x[0].reshape({3, 2}); }},
      {"transpose", {{2, 3}}, [](const In& x) { return x[0].transpose(0, 1); }},
      {"index_select", {{2, 3}}, [](const In& x) { return index_select(x[0], 1, idx({2, 0})); }},
      {"gather", {{2, 3}}, [](const In& x) { return gather(x[0], 1, idx({2, 0, 1, 1, 0, 2}).reshape({2, 3})); }},
      {"to_float64", {{2, 3}}, [](const In& x) { return x[0].to(kFloat64); }},
  };
}

Tensor floating_input(const Shape& shape, DType dtype, int k) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return (arange(n, kFloat64).reshape(shape) * 0.37 + 0.5 + 0.1 * k).to(dtype);
}

// The dtype the op's result has under bfloat16 autocast, or "error" where it refuses.
std::string result_dtype(const Case& c, const std::vector<DType>& dtypes) {
  In inputs;
  for (size_t k = 0; k < c.shapes.size(); ++k) inputs.push_back(floating_input(c.shapes[k], dtypes[k], static_cast<int>(k)));
  autocast::AutocastGuard guard(kBFloat16);
  try {
    return dtype_name(c.op(inputs).dtype());
  } catch (const Error&) {
    return "error";
  }
}

TEST(Autocast, EveryOpRunsInTheDtypePyTorchRunsItIn) {
  const json& policy = load_fixture("autocast.json").at("policy");
  std::vector<Case> all = cases();
  ASSERT_EQ(all.size(), policy.size()) << "the cases here and in generate_autocast.py differ";
  for (const Case& c : all) {
    ASSERT_TRUE(policy.contains(c.name)) << c.name;
    const size_t n = c.shapes.size();
    std::map<std::string, std::vector<DType>> modes{{"f32", std::vector<DType>(n, kFloat32)},
                                                    {"bf16", std::vector<DType>(n, kBFloat16)},
                                                    {"f64", std::vector<DType>(n, kFloat64)}};
    if (n >= 2) {
      modes["mixed"] = std::vector<DType>(n, kFloat32);
      modes["mixed"][0] = kBFloat16;
    }
    for (const auto& [mode, dtypes] : modes) {
      const std::string want = policy.at(c.name).at(mode).get<std::string>();
      const std::string got = result_dtype(c, dtypes);
      // Where PyTorch refuses a mix (dot of bfloat16 with float32), cohort may refuse too or not.
      if (want == "error") continue;
      EXPECT_EQ(got, want) << c.name << " with " << mode << " inputs";
    }
  }
}

// --- Values -----------------------------------------------------------------------------------
// generate_autocast.py's pattern: element i is scale * sin(0.731 i + seed), computed in float64.
Tensor pattern(const json& spec) {
  Shape shape = spec.at(0).get<Shape>();
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  const double seed = spec.at(1).get<double>(), scale = spec.at(2).get<double>();
  return (sin(arange(n, kFloat64) * 0.731 + seed) * scale).reshape(shape).to(kFloat32);
}

// got against a fixture entry whose data may hold only the first elements: each within
// tol * (|want| + rms(want)), bfloat16's rounding carried through a few layers.
::testing::AssertionResult close_to(const std::string& what, const Tensor& got, const json& want, double tol) {
  if (dtype_name(got.dtype()) != want.at("dtype").get<std::string>())
    return ::testing::AssertionFailure() << what << ": dtype " << got.dtype() << ", PyTorch's is " << want.at("dtype");
  if (got.sizes().vec() != want.at("shape").get<Shape>())
    return ::testing::AssertionFailure() << what << ": shape " << got.sizes() << ", PyTorch's is " << want.at("shape");
  std::vector<double> w = want.at("data").get<std::vector<double>>();
  Tensor flat = got.detach().to(kFloat64).contiguous().reshape({-1});
  double rms = 0;
  for (double v : w) rms += v * v;
  rms = std::sqrt(rms / static_cast<double>(w.size()));
  for (size_t i = 0; i < w.size(); ++i) {
    const double g = flat[static_cast<int64_t>(i)].item<double>();
    if (!(std::abs(g - w[i]) <= tol * (std::abs(w[i]) + rms)))
      return ::testing::AssertionFailure() << what << "[" << i << "]: got " << g << ", PyTorch " << w[i]
                                           << " (tolerance " << tol << " x (|want| + rms " << rms << "))";
  }
  return ::testing::AssertionSuccess();
}

using Forward = std::function<Tensor(const std::map<std::string, Tensor>&, const std::map<std::string, Tensor>&)>;

// For a network deep enough that bfloat16's roundings flip ReLU and max-pool decisions (two libraries'
// roundings then route some gradients differently), elements are not comparable one by one. The
// tensor as a whole is: cohort's distance from PyTorch's bfloat16 result must be within `factor` times
// the distance bfloat16 itself puts between PyTorch's bfloat16 and float32 results.
::testing::AssertionResult close_as_bfloat16(const std::string& what, const Tensor& got, const json& want,
                                             const json& want_f32, double factor) {
  std::vector<double> w = want.at("data").get<std::vector<double>>(), w32 = want_f32.at("data").get<std::vector<double>>();
  Tensor flat = got.detach().to(kFloat64).contiguous().reshape({-1});
  double ours = 0, theirs = 0, scale = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    const double g = flat[static_cast<int64_t>(i)].item<double>();
    ours += (g - w[i]) * (g - w[i]);
    theirs += (w32[i] - w[i]) * (w32[i] - w[i]);
    scale += w[i] * w[i];
  }
  ours = std::sqrt(ours), theirs = std::sqrt(theirs), scale = std::sqrt(scale);
  std::cout << "[ autocast ] " << what << ": |cohort - PyTorch bf16| / |PyTorch bf16| = " << ours / scale
            << ", |PyTorch f32 - PyTorch bf16| / |PyTorch bf16| = " << theirs / scale << "\n";
  if (ours <= factor * theirs + 1e-3 * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": |cohort - PyTorch bf16| = " << ours << ", more than " << factor
                                       << " x |PyTorch float32 - PyTorch bf16| = " << theirs << " (|PyTorch bf16| = "
                                       << scale << ")";
}

// tol > 0: element by element (close_to); tol == 0: tensor by tensor (close_as_bfloat16, factor 2).
void check_values(const std::string& name, const Forward& forward, double tol) {
  const json& entry = load_fixture("autocast.json").at("values").at(name);
  std::map<std::string, Tensor> inputs, params;
  for (const auto& [k, spec] : entry.at("inputs").items()) inputs[k] = pattern(spec);
  for (const auto& [k, spec] : entry.at("params").items()) params[k] = pattern(spec).requires_grad_(true);
  Tensor y;
  {
    autocast::AutocastGuard guard(kBFloat16);
    y = forward(inputs, params);
  }
  Tensor weights = pattern(json::array({y.sizes().vec(), 0.5, 1.0}));
  (y.to(kFloat32) * weights).sum().backward();
  EXPECT_TRUE(close_to(name + " output", y, entry.at("output"), tol > 0 ? tol : 1.0 / 64));
  for (const auto& [k, want] : entry.at("grads").items()) {
    ASSERT_TRUE(params.at(k).grad().defined()) << name << ": no gradient reached " << k;
    EXPECT_EQ(params.at(k).grad().dtype(), kFloat32) << name << ": gradient of " << k;
    if (tol > 0)
      EXPECT_TRUE(close_to(name + " gradient of " + k, params.at(k).grad(), want, tol));
    else
      EXPECT_TRUE(close_as_bfloat16(name + " gradient of " + k, params.at(k).grad(), want,
                                    entry.at("float32_grads").at(k), 2.0));
  }
}

TEST(Autocast, LinearMatchesPyTorch) {
  check_values("linear", [](const auto& i, const auto& p) { return linear(i.at("x"), p.at("weight"), p.at("bias")); },
               1.0 / 64);
}

TEST(Autocast, Conv2dMatchesPyTorch) {
  check_values("conv2d",
               [](const auto& i, const auto& p) { return conv2d(i.at("x"), p.at("weight"), p.at("bias"), 1, 1); },
               1.0 / 64);
}

TEST(Autocast, BatchNormAfterAConvolutionMatchesPyTorch) {
  check_values("conv_batch_norm",
               [](const auto& i, const auto& p) {
                 return batch_norm(conv2d(i.at("x"), p.at("weight")), p.at("gamma") + 1.0, p.at("beta"), {}, {}, true,
                                   0.1, 1e-5);
               },
               1.0 / 32);
}

TEST(Autocast, BlitzCnnMatchesPyTorch) {
  check_values("blitz_cnn",
               [](const auto& i, const auto& p) {
                 Tensor x = max_pool2d(relu(conv2d(i.at("x"), p.at("conv1.weight"), p.at("conv1.bias"))), 2);
                 x = max_pool2d(relu(conv2d(x, p.at("conv2.weight"), p.at("conv2.bias"))), 2);
                 x = x.flatten(1);
                 x = relu(linear(x, p.at("fc1.weight"), p.at("fc1.bias")));
                 x = relu(linear(x, p.at("fc2.weight"), p.at("fc2.bias")));
                 x = linear(x, p.at("fc3.weight"), p.at("fc3.bias"));
                 return cross_entropy_loss(x, idx({3, 1, 7, 0}));
               },
               0);
}

// --- State --------------------------------------------------------------------------------------
TEST(Autocast, GuardsNestAndRestoreTheState) {
  EXPECT_FALSE(autocast::is_cpu_enabled());
  {
    autocast::AutocastGuard outer(kBFloat16);
    EXPECT_TRUE(autocast::is_cpu_enabled());
    {
      autocast::AutocastGuard off(kBFloat16, /*enabled=*/false);
      EXPECT_FALSE(autocast::is_cpu_enabled());
      EXPECT_EQ(mm(ones({2, 2}), ones({2, 2})).dtype(), kFloat32);
      autocast::AutocastGuard half(kHalf);
      EXPECT_EQ(mm(ones({2, 2}), ones({2, 2})).dtype(), kFloat16);
    }
    EXPECT_EQ(autocast::get_autocast_cpu_dtype(), kBFloat16);
    EXPECT_EQ(mm(ones({2, 2}), ones({2, 2})).dtype(), kBFloat16);
  }
  EXPECT_FALSE(autocast::is_cpu_enabled());
  EXPECT_EQ(mm(ones({2, 2}), ones({2, 2})).dtype(), kFloat32);
}

TEST(Autocast, TheStateIsPerThread) {
  autocast::AutocastGuard guard(kBFloat16);
  DType other = kFloat64;
  std::thread([&] { other = mm(ones({2, 2}), ones({2, 2})).dtype(); }).join();
  EXPECT_EQ(other, kFloat32);
}

TEST(Autocast, RefusesDtypesItCannotComputeIn) {
  EXPECT_THAT(error_of([] { autocast::AutocastGuard g(kFloat32); }),
              ::testing::HasSubstr("AutocastGuard: CPU autocast computes in bfloat16 or float16, got float32"));
  EXPECT_THAT(error_of([] { autocast::set_autocast_cpu_dtype(kFloat64); }),
              ::testing::HasSubstr("set_autocast_cpu_dtype: CPU autocast computes in bfloat16 or float16, got float64"));
  EXPECT_THAT(error_of([] { autocast::set_enabled(true); }), ::testing::HasSubstr("set_cpu_enabled"));
  EXPECT_FALSE(autocast::is_enabled());
}

TEST(Autocast, LibtorchNamesEnableItUntilDisabled) {
  autocast::set_autocast_cpu_dtype(kBFloat16);
  autocast::set_cpu_enabled(true);
  Tensor w = randn({3, 3}).requires_grad_(true);
  Tensor y = linear(ones({2, 3}), w);
  autocast::clear_cache();
  autocast::set_cpu_enabled(false);
  EXPECT_EQ(y.dtype(), kBFloat16);
  y.to(kFloat32).sum().backward();
  EXPECT_EQ(w.grad().dtype(), kFloat32);
  EXPECT_EQ(linear(ones({2, 3}), w).dtype(), kFloat32);
}

// --- Gradients reach float32 master weights -------------------------------------------------------
TEST(Autocast, GradientsOfFloat32ParametersAreFloat32AndMatchAFloat32Run) {
  manual_seed(3);
  Tensor x = randn({8, 16}), w = (randn({4, 16}) * 0.3).requires_grad_(true), b = randn({4}).requires_grad_(true);
  Tensor target = idx({0, 1, 2, 3, 0, 1, 2, 3});
  Tensor loss;
  {
    autocast::AutocastGuard guard(kBFloat16);
    loss = cross_entropy_loss(linear(x, w, b), target);
  }
  EXPECT_EQ(loss.dtype(), kFloat32);
  loss.backward();
  Tensor gw = w.grad().clone(), gb = b.grad().clone();
  EXPECT_EQ(gw.dtype(), kFloat32);
  EXPECT_EQ(gb.dtype(), kFloat32);
  w.mutable_grad() = Tensor();
  b.mutable_grad() = Tensor();
  cross_entropy_loss(linear(x, w, b), target).backward();
  EXPECT_LT(max_abs_diff(gw, w.grad()), 0.02 * w.grad().abs().max().item<double>());
  EXPECT_LT(max_abs_diff(gb, b.grad()), 0.02 * b.grad().abs().max().item<double>());
}

TEST(Autocast, Float64IsNeverCast) {
  autocast::AutocastGuard guard(kBFloat16);
  EXPECT_EQ(mm(ones({2, 2}, kFloat64), ones({2, 2}, kFloat64)).dtype(), kFloat64);
  EXPECT_EQ(cross_entropy_loss(ones({2, 3}, kFloat64), idx({0, 1})).dtype(), kFloat64);
}

// --- The cast cache ---------------------------------------------------------------------------
TEST(Autocast, AWeightUsedTwiceInARegionIsCastOnce) {
  Tensor w = ones({3, 3}).requires_grad_(true);
  autocast::AutocastGuard guard(kBFloat16);
  // Two products of the same weight: their backward nodes' inputs lead to one cast node.
  Tensor a = mm(ones({2, 3}), w), b = mm(ones({2, 3}) * 2, w);
  ASSERT_TRUE(a.grad_fn() && b.grad_fn());
  auto cast_of = [](const Tensor& out) { return out.grad_fn()->next_functions().at(1).get(); };
  EXPECT_EQ(cast_of(a), cast_of(b));
  EXPECT_NE(cast_of(a), nullptr);
}

TEST(Autocast, AnInPlaceUpdateOfAWeightIsSeenInsideTheSameRegion) {
  Tensor w = ones({2, 2}).requires_grad_(true);
  autocast::AutocastGuard guard(kBFloat16);
  EXPECT_EQ(mm(ones({1, 2}), w).sum().item<double>(), 4.0);
  {
    NoGradGuard no_grad;
    w.mul_(3);  // an optimizer step inside a long region
  }
  EXPECT_EQ(mm(ones({1, 2}), w).sum().item<double>(), 12.0);
}

TEST(Autocast, ACastMadeWithoutGradModeIsNotReusedWithIt) {
  Tensor w = ones({2, 2}).requires_grad_(true);
  autocast::AutocastGuard guard(kBFloat16);
  {
    NoGradGuard no_grad;
    EXPECT_FALSE(mm(ones({1, 2}), w).requires_grad());
  }
  Tensor y = mm(ones({1, 2}), w);
  ASSERT_TRUE(y.requires_grad());
  y.to(kFloat32).sum().backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().sum().item<double>(), 4.0);
}

// --- Other threads --------------------------------------------------------------------------------
class AutocastDevices : public WithDevices<2> {};

TEST_F(AutocastDevices, DataParallelReplicasCastAsTheCallerDoes) {
  manual_seed(5);
  auto model = nn::Linear(8, 4);
  nn::DataParallel<nn::LinearImpl> dp(model.ptr(), first(2));
  Tensor x = randn({6, 8});
  Tensor y;
  {
    autocast::AutocastGuard guard(kBFloat16);
    y = dp.forward(x);
  }
  EXPECT_EQ(y.dtype(), kBFloat16);
  y.to(kFloat32).sum().backward();
  EXPECT_EQ(model->weight.grad().dtype(), kFloat32);
  // The same as one device under autocast.
  Tensor gw = model->weight.grad().clone();
  model->weight.mutable_grad() = Tensor();
  model->bias.mutable_grad() = Tensor();
  Tensor y1;
  {
    autocast::AutocastGuard guard(kBFloat16);
    y1 = model->forward(x);
  }
  EXPECT_EQ(max_abs_diff(y, y1), 0.0);
  y1.to(kFloat32).sum().backward();
  // Each replica's weight gradient is rounded to bfloat16 before the two are summed in float32: within
  // a bfloat16 rounding of the one-device gradient.
  EXPECT_LE(max_abs_diff(gw, model->weight.grad()), model->weight.grad().abs().max().item<double>() / 128);
}

TEST_F(AutocastDevices, BackwardOnAnotherDevicesWorkerRunsWithTheCallersState) {
  // A node on cpu:1 runs on that device's worker thread; inside it, a matrix product made by the
  // backward (create_graph) has the dtype it would have on the calling thread.
  Tensor w = ones({2, 2}, TensorOptions().device(Device(kCPU, 1))).requires_grad_(true);
  Tensor x = ones({1, 2}, TensorOptions().device(Device(kCPU, 1)));
  autocast::AutocastGuard guard(kBFloat16);
  Tensor y = mm(x, w);
  auto grads = autograd::grad({y.to(kFloat32).sum()}, {w}, {}, true, true);
  EXPECT_EQ(grads[0].dtype(), kFloat32);
  EXPECT_EQ(grads[0].sum().item<double>(), 4.0);
}

// What a backward node sees: the autocast state and the region nesting (a hook's own
// increment_nesting() returns 1 when the engine set no state of its own around the node).
struct SeenInBackward {
  bool enabled = false;
  DType dtype = kFloat32;
  int nesting = -1;
};
unsigned record_in_backward(const Tensor& t, SeenInBackward& seen) {
  return t.register_hook([&seen](const Tensor&) {
    seen.enabled = autocast::is_cpu_enabled();
    seen.dtype = autocast::get_autocast_cpu_dtype();
    seen.nesting = autocast::increment_nesting();
    autocast::decrement_nesting();
  });
}

TEST(Autocast, BackwardOnTheCallingThreadRunsInItsStateWithoutAGuardPerNode) {
  Tensor w = ones({2, 2}).requires_grad_(true);
  SeenInBackward outside, inside;
  Tensor y = mm(ones({1, 2}), w);
  record_in_backward(y, outside);
  y.sum().backward();
  EXPECT_FALSE(outside.enabled);
  EXPECT_EQ(outside.nesting, 1);
  {
    autocast::AutocastGuard guard(kFloat16);
    Tensor z = mm(ones({1, 2}), w);
    record_in_backward(z, inside);
    z.to(kFloat32).sum().backward();
  }
  EXPECT_TRUE(inside.enabled);
  EXPECT_EQ(inside.dtype, kFloat16);
  EXPECT_EQ(inside.nesting, 2);  // the region's guard and the hook's own: none per node
  EXPECT_FALSE(autocast::is_cpu_enabled());
}

TEST(Autocast, BackwardOutsideARegionKeepsTheCastCacheOfTheLibtorchNames) {
  // Enabled without a guard (nesting 0): the cast made in forward survives the backward, as it does
  // on this thread until clear_cache(); a state set around each node would empty it.
  Tensor w = ones({3, 3}).requires_grad_(true);
  autocast::set_autocast_cpu_dtype(kBFloat16);
  autocast::set_cpu_enabled(true);
  Tensor a = mm(ones({2, 3}), w);
  std::shared_ptr<autograd::Node> cast = a.grad_fn()->next_functions().at(1);
  ASSERT_NE(cast, nullptr);
  a.to(kFloat32).sum().backward();
  Tensor b = mm(ones({2, 3}), w);
  EXPECT_EQ(b.grad_fn()->next_functions().at(1).get(), cast.get());
  autocast::clear_cache();
  autocast::set_cpu_enabled(false);
  EXPECT_EQ(w.grad().sum().item<double>(), 18.0);
}

TEST_F(AutocastDevices, BackwardOnAnotherDevicesWorkerHasTheCallersStateInEveryNode) {
  Tensor w = ones({2, 2}, TensorOptions().device(Device(kCPU, 1))).requires_grad_(true);
  Tensor x = ones({1, 2}, TensorOptions().device(Device(kCPU, 1)));
  SeenInBackward outside, inside;
  Tensor y = mm(x, w);
  record_in_backward(y, outside);
  y.to(Device(kCPU, 0)).sum().backward();  // the root on cpu:0, y's node on cpu:1's thread
  EXPECT_FALSE(outside.enabled);
  EXPECT_EQ(outside.nesting, 1);
  {
    autocast::AutocastGuard guard(kBFloat16);
    Tensor z = mm(x, w);
    record_in_backward(z, inside);
    z.to(kFloat32).to(Device(kCPU, 0)).sum().backward();
  }
  EXPECT_TRUE(inside.enabled);
  EXPECT_EQ(inside.dtype, kBFloat16);
  EXPECT_EQ(inside.nesting, 2);  // the engine's guard on that thread and the hook's own
}

}  // namespace
}  // namespace cohort::testing

namespace cohort::testing {
namespace {

// generate_autocast.py's MODULES: layers whose result dtype depends on how they are composed.
TEST(Autocast, LayersRunInTheDtypePyTorchRunsThemIn) {
  const json& want = load_fixture("autocast.json").at("modules");
  using Run = std::function<Tensor(const Tensor&)>;
  std::vector<std::tuple<std::string, Shape, Run>> layers{
      {"lstm", {5, 2, 8}, [m = nn::LSTM(nn::LSTMOptions(8, 8))](const Tensor& x) mutable { return std::get<0>(m(x)); }},
      {"gru", {5, 2, 8}, [m = nn::GRU(nn::GRUOptions(8, 8))](const Tensor& x) mutable { return std::get<0>(m(x)); }},
      {"rnn", {5, 2, 8}, [m = nn::RNN(nn::RNNOptions(8, 8))](const Tensor& x) mutable { return std::get<0>(m(x)); }},
      {"lstm_cell", {2, 8},
       [m = nn::LSTMCell(nn::LSTMCellOptions(8, 8))](const Tensor& x) mutable { return std::get<0>(m(x)); }},
      {"gru_cell", {2, 8}, [m = nn::GRUCell(nn::GRUCellOptions(8, 8))](const Tensor& x) mutable { return m(x); }},
      {"rnn_cell", {2, 8}, [m = nn::RNNCell(nn::RNNCellOptions(8, 8))](const Tensor& x) mutable { return m(x); }},
      {"multihead_attention", {5, 2, 8},
       [m = nn::MultiheadAttention(nn::MultiheadAttentionOptions(8, 2))](const Tensor& x) mutable {
         return std::get<0>(m(x, x, x));
       }},
      {"transformer_encoder_layer", {5, 2, 8},
       [m = nn::TransformerEncoderLayer(nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16).dropout(0.0))](
           const Tensor& x) mutable { return m(x); }},
      {"layer_norm", {5, 2, 8}, [m = nn::LayerNorm(nn::LayerNormOptions({8}))](const Tensor& x) mutable { return m(x); }},
  };
  ASSERT_EQ(layers.size(), want.size());
  for (auto& [name, shape, run] : layers) {
    for (auto [mode, dtype] : {std::pair{"f32", kFloat32}, std::pair{"bf16", kBFloat16}}) {
      const std::string expected = want.at(name).at(mode).get<std::string>();
      if (expected == "error") continue;  // PyTorch refuses a bfloat16 input to float32 layer norm weights
      Tensor x = floating_input(shape, dtype, 0);
      std::string got;
      {
        autocast::AutocastGuard guard(kBFloat16);
        try {
          got = dtype_name(run(x).dtype());
        } catch (const Error& e) {
          got = std::string("error: ") + e.what();
        }
      }
      EXPECT_EQ(got, expected) << name << " with " << mode << " input";
    }
  }
}

}  // namespace
}  // namespace cohort::testing
