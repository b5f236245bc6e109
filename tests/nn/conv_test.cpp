// Convolution: the oneDNN kernels against the plain reference, float64 gradcheck, PyTorch's values
// (tests/fixtures/conv.json from tests/fixtures/generate_conv.py), the modules' reprs and errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/pytorch_fixture.h"

#include "support/error_of.h"

using cohort::testing::error_of;

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "../src/ops/cpu/conv_kernels.h"
#include "cohort/autograd/engine.h"
#include "cohort/autograd/node.h"
#include "cohort/core/generator.h"
#include "cohort/nn/conv.h"
#include "cohort/ops/backend.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "support/gradcheck.h"

namespace cohort {
namespace {

namespace F = nn::functional;
using ::testing::HasSubstr;
using json = nlohmann::json;

double max_diff(const Tensor& a, const Tensor& b) {
  return (a.detach().to(kFloat64) - b.detach().to(kFloat64)).abs().max().item<double>();
}

std::string describe(const Tensor& x, const Tensor& w, const kernel::Conv2dParams& p) {
  std::ostringstream os;
  os << "input " << x.sizes() << " weight " << w.sizes() << " stride " << IntArrayRef(p.stride.data(), 2)
     << " pad_lo " << IntArrayRef(p.pad_lo.data(), 2) << " pad_hi " << IntArrayRef(p.pad_hi.data(), 2)
     << " dilation " << IntArrayRef(p.dilation.data(), 2) << " groups " << p.groups
     << (x.is_contiguous() ? "" : " (non-contiguous input)");
  return os.str();
}

// ---- oneDNN against the plain loops ---------------------------------------------------------

TEST(ConvKernels, DnnlMatchesReferenceOnRandomShapes) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  manual_seed(3);
  for (int trial = 0; trial < 60; ++trial) {
    kernel::Conv2dParams p;
    p.groups = pick(1, 3);
    const int64_t N = trial % 3 == 0 ? 1 : pick(2, 3), Cg = pick(1, 3), Og = pick(1, 3);
    const int64_t KH = pick(1, 4), KW = pick(1, 4);
    for (int d = 0; d < 2; ++d) {
      p.stride[d] = pick(1, 3), p.dilation[d] = pick(1, 2), p.pad_lo[d] = pick(0, 2), p.pad_hi[d] = pick(0, 2);
    }
    if (trial % 4 == 1) {  // "same" with even kernels: one more padding at the end
      p.stride = {1, 1};
      for (int d = 0; d < 2; ++d) {
        const int64_t total = p.dilation[d] * ((d ? KW : KH) - 1);
        p.pad_lo[d] = total / 2, p.pad_hi[d] = total - total / 2;
      }
    }
    const int64_t H = p.dilation[0] * (KH - 1) + 1 + pick(0, 6), W = p.dilation[1] * (KW - 1) + 1 + pick(0, 6);
    const int64_t P = (H + p.pad_lo[0] + p.pad_hi[0] - p.dilation[0] * (KH - 1) - 1) / p.stride[0] + 1;
    const int64_t Q = (W + p.pad_lo[1] + p.pad_hi[1] - p.dilation[1] * (KW - 1) - 1) / p.stride[1] + 1;
    Tensor x = randn({N, Cg * p.groups, H, W});
    if (trial % 3 == 2) x = testing::make_noncontiguous(x);
    Tensor w = randn({Og * p.groups, Cg, KH, KW}), b = randn({Og * p.groups}), dy = randn({N, Og * p.groups, P, Q});
    if (trial % 5 == 3) dy = testing::make_noncontiguous(dy);
    const bool with_bias = trial % 2 == 0;
    SCOPED_TRACE(describe(x, w, p));

    Tensor y_fast = empty({N, Og * p.groups, P, Q}), y_ref = empty({N, Og * p.groups, P, Q});
    kernel::conv2d_forward(y_fast, x, w, with_bias ? b : Tensor(), p);
    kernel::conv2d_forward_reference(y_ref, x, w, with_bias ? b : Tensor(), p);
    EXPECT_LT(max_diff(y_fast, y_ref), 1e-4) << "forward";

    // Both gradients in one call (diff_dst reordered once for both), then each alone: the same bits.
    Tensor dx_fast = empty(x.sizes()), dx_ref = empty(x.sizes());
    Tensor dw_fast = empty(w.sizes()), dw_ref = empty(w.sizes());
    Tensor db_fast = with_bias ? empty({w.size(0)}) : Tensor(), db_ref = with_bias ? empty({w.size(0)}) : Tensor();
    kernel::conv2d_backward(dx_fast, dw_fast, db_fast, dy, x, w, p);
    Tensor dx_alone = empty(x.sizes()), dw_alone = empty(w.sizes());
    kernel::conv2d_backward(dx_alone, Tensor(), Tensor(), dy, Tensor(), w, p);
    kernel::conv2d_backward(Tensor(), dw_alone, Tensor(), dy, x, Tensor(), p);
    EXPECT_TRUE(equal(dx_fast, dx_alone));
    EXPECT_TRUE(equal(dw_fast, dw_alone));
    kernel::conv2d_backward_data_reference(dx_ref, dy, w, p);
    EXPECT_LT(max_diff(dx_fast, dx_ref), 1e-4) << "backward data";
    kernel::conv2d_backward_weights_reference(dw_ref, db_ref, x, dy, p);
    EXPECT_LT(max_diff(dw_fast, dw_ref), 1e-3) << "backward weights";
    if (with_bias) {
      EXPECT_LT(max_diff(db_fast, db_ref), 1e-3) << "backward bias";
    }
  }
}

TEST(ConvKernels, Float32OpMatchesFloat64Op) {
  manual_seed(4);
  Tensor x = randn({3, 4, 9, 8}), w = randn({6, 2, 3, 3}), b = randn({6});
  for (bool same : {false, true}) {
    auto opts = F::Conv2dFuncOptions().groups(2).dilation({1, 2});
    if (same) {
      opts.padding(kSame);
    } else {
      opts.padding({2, 1}).stride({2, 1});
    }
    Tensor y32 = F::conv2d(x, w, b, opts);
    Tensor y64 = F::conv2d(x.to(kFloat64), w.to(kFloat64), b.to(kFloat64), opts);
    EXPECT_EQ(y32.sizes(), y64.sizes());
    EXPECT_LT(max_diff(y32, y64), 1e-4) << (same ? "same" : "explicit padding");
  }
}

// Restores the process-wide conv algorithm when a test ends.
struct ConvAlgorithmScope {
  ConvAlgorithm saved = conv_algorithm();
  explicit ConvAlgorithmScope(ConvAlgorithm a) { set_conv_algorithm(a); }
  ~ConvAlgorithmScope() { set_conv_algorithm(saved); }
};

// Output, input gradient and weight gradient of one conv2d (padding 1), in float64.
std::vector<Tensor> conv_and_grads(const Tensor& x, const Tensor& w, DType dtype) {
  Tensor xd = x.to(dtype).clone().requires_grad_(true), wd = w.to(dtype).clone().requires_grad_(true);
  Tensor y = F::conv2d(xd, wd, F::Conv2dFuncOptions().padding(1));
  (y * y).sum().backward();  // a gradient that differs per element
  return {y.detach().to(kFloat64), xd.grad().to(kFloat64), wd.grad().to(kFloat64)};
}

TEST(ConvAlgorithm, WinogradAndDirectBothMatchFloat64) {
  manual_seed(5);
  // 3x3, stride 1, 64 channels, 2 x 4 x 4 = 32 tiles of 4x4: Auto picks Winograd.
  Tensor x = randn({2, 64, 16, 16}), w = randn({64, 64, 3, 3}) / 24.0;
  const std::vector<Tensor> exact = conv_and_grads(x, w, kFloat64);
  std::vector<Tensor> got[3];
  const ConvAlgorithm algorithms[3] = {ConvAlgorithm::Direct, ConvAlgorithm::Winograd, ConvAlgorithm::Auto};
  const char* names[3] = {"output", "input gradient", "weight gradient"};
  for (int a = 0; a < 3; ++a) {
    ConvAlgorithmScope scope(algorithms[a]);
    got[a] = conv_and_grads(x, w, kFloat32);
    for (int k = 0; k < 3; ++k) {
      const double scale = exact[k].abs().max().item<double>();
      EXPECT_LT(max_diff(got[a][k], exact[k]) / scale, 2e-5) << names[k] << ", algorithm " << a;
    }
  }
  // Winograd really ran (its rounding differs from direct's), and Auto chose it here.
  for (int k = 0; k < 3; ++k) {
    EXPECT_FALSE(equal(got[0][k], got[1][k])) << names[k];
    EXPECT_TRUE(equal(got[1][k], got[2][k])) << names[k];
  }
}

TEST(ConvAlgorithm, WinogradIsOneDnnsWhereItRunsAvx512AndOursElsewhere) {
  // oneDNN 2.6's Winograd kernels are AVX-512 ones: `cohort info` says whose kernels run.
  const BackendInfo info = backend_info();
  EXPECT_EQ(info.winograd, winograd_implementation());
  const bool avx512 = info.cpu_isa.rfind("avx512", 0) == 0;
  EXPECT_EQ(winograd_implementation(), avx512 ? "oneDNN" : "cohort") << "oneDNN's ISA: " << info.cpu_isa;
}

TEST(ConvAlgorithm, AutoStaysDirectWhereWinogradDoesNotPay) {
  manual_seed(6);
  struct Case {
    const char* why;
    Tensor x, w;
    F::Conv2dFuncOptions opts;
  };
  std::vector<Case> cases = {
      {"8 tiles", randn({2, 64, 8, 8}), randn({64, 64, 3, 3}), F::Conv2dFuncOptions().padding(1)},
      {"stride 2", randn({8, 16, 32, 32}), randn({16, 16, 3, 3}), F::Conv2dFuncOptions().padding(1).stride(2)},
      {"groups", randn({8, 16, 32, 32}), randn({16, 8, 3, 3}), F::Conv2dFuncOptions().padding(1).groups(2)},
      {"5x5", randn({8, 16, 32, 32}), randn({16, 16, 5, 5}), F::Conv2dFuncOptions().padding(2)},
  };
  // cohort's own Winograd also wants channels and whole tiles (Note [Winograd convolution]).
  if (winograd_implementation() == "cohort") {
    cases.push_back({"32 channels", randn({8, 32, 32, 32}), randn({32, 32, 3, 3}), F::Conv2dFuncOptions().padding(1)});
    cases.push_back({"14x14", randn({8, 64, 14, 14}), randn({64, 64, 3, 3}), F::Conv2dFuncOptions().padding(1)});
  }
  for (const Case& c : cases) {
    Tensor direct, automatic;
    {
      ConvAlgorithmScope scope(ConvAlgorithm::Direct);
      direct = F::conv2d(c.x, c.w, c.opts);
    }
    {
      ConvAlgorithmScope scope(ConvAlgorithm::Auto);
      automatic = F::conv2d(c.x, c.w, c.opts);
    }
    EXPECT_TRUE(equal(direct, automatic)) << c.why;
  }
}

// ---- gradients -------------------------------------------------------------------------------

struct GradCase {
  const char* name;
  Shape x, w;
  bool bias;
  F::Conv2dFuncOptions opts;
};

TEST(ConvGradcheck, Conv2dInputWeightBias) {
  manual_seed(5);
  const std::vector<GradCase> cases = {
      {"plain", {2, 2, 5, 4}, {3, 2, 3, 2}, true, F::Conv2dFuncOptions()},
      {"stride_padding", {1, 3, 6, 5}, {2, 3, 3, 3}, true, F::Conv2dFuncOptions().stride({2, 3}).padding({1, 2})},
      {"groups_dilation", {2, 4, 6, 6}, {4, 2, 2, 3}, true, F::Conv2dFuncOptions().groups(2).dilation({2, 1}).padding(1)},
      {"same_even_kernel", {2, 2, 5, 4}, {2, 2, 4, 2}, true, F::Conv2dFuncOptions().padding(kSame)},
      {"valid_no_bias", {1, 2, 4, 4}, {2, 2, 2, 2}, false, F::Conv2dFuncOptions().padding(kValid)},
      {"unbatched", {2, 4, 4}, {2, 2, 3, 3}, true, F::Conv2dFuncOptions().padding(1)},
  };
  for (const GradCase& c : cases) {
    std::vector<Tensor> in{randn(c.x, kFloat64), randn(c.w, kFloat64)};
    if (c.bias) in.push_back(randn({c.w[0]}, kFloat64));
    auto fn = [&](const std::vector<Tensor>& t) {
      return std::vector<Tensor>{F::conv2d(t[0], t[1], t.size() > 2 ? t[2] : Tensor(), c.opts)};
    };
    EXPECT_TRUE(testing::gradcheck(fn, in, 1e-6, 1e-5, 1e-3, std::string("conv2d ") + c.name));
    if (std::string(c.name) == "groups_dilation") {
      EXPECT_TRUE(testing::gradcheck_noncontiguous(fn, in, 1e-6, 1e-5, 1e-3, "conv2d groups_dilation, non-contiguous"));
    }
  }
}

TEST(ConvGradcheck, Conv1dInputWeightBias) {
  manual_seed(6);
  std::vector<Tensor> in{randn({2, 4, 9}, kFloat64), randn({4, 2, 4}, kFloat64), randn({4}, kFloat64)};
  for (auto opts : {F::Conv1dFuncOptions().groups(2).padding(kSame).dilation(2),
                    F::Conv1dFuncOptions().groups(2).stride(2).padding(1)}) {
    auto fn = [&](const std::vector<Tensor>& t) { return std::vector<Tensor>{F::conv1d(t[0], t[1], t[2], opts)}; };
    EXPECT_TRUE(testing::gradcheck(fn, in, 1e-6, 1e-5, 1e-3, "conv1d"));
  }
}

TEST(ConvGradcheck, OnlyBiasOrOnlyInputRequiresGrad) {
  manual_seed(7);
  Tensor x = randn({2, 3, 5, 5}), w = randn({4, 3, 3, 3}), b = randn({4});
  b.requires_grad_();
  F::conv2d(x, w, b).sum().backward();
  EXPECT_LT(max_diff(b.grad(), full({4}, 18.0)), 1e-4);  // 2 images x 3 x 3 outputs
  x.requires_grad_();
  Tensor y = F::conv2d(x, w, F::Conv2dFuncOptions().padding(1));
  EXPECT_EQ(y.grad_fn()->name(), "ConvolutionBackward0");
  y.sum().backward();
  EXPECT_EQ(x.grad().sizes(), x.sizes());
  EXPECT_FALSE(w.grad().defined());
}

// ---- PyTorch's values ------------------------------------------------------------------------

template <size_t D>
F::ConvFuncOptions<D> options_of(const json& c) {
  auto arr = [](const json& j) {  // [v] stands for v in every dim, as PyTorch's int arguments
    auto v = j.get<std::vector<int64_t>>();
    return v.size() == 1 ? ExpandingArray<D>(v[0]) : ExpandingArray<D>(v);
  };
  F::ConvFuncOptions<D> o;
  o.stride(arr(c.at("stride"))).dilation(arr(c.at("dilation"))).groups(c.at("groups").get<int64_t>());
  const json& pad = c.at("padding");
  if (pad.is_string()) {
    if (pad == "same") {
      o.padding(kSame);
    } else {
      o.padding(kValid);
    }
  } else {
    o.padding(arr(pad));
  }
  return o;
}

TEST(ConvFixture, MatchesPyTorchValuesAndGradients) {
  const json& fixture = testing::load_fixture("conv.json");
  int checked = 0;
  for (const json& c : fixture.at("cases")) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    Tensor x = testing::decode_tensor(c.at("input")).requires_grad_(), w = testing::decode_tensor(c.at("weight")).requires_grad_();
    Tensor b = c.at("bias").is_null() ? Tensor() : testing::decode_tensor(c.at("bias")).requires_grad_();
    Tensor y = c.at("op") == "conv1d" ? F::conv1d(x, w, b, options_of<1>(c)) : F::conv2d(x, w, b, options_of<2>(c));
    EXPECT_TRUE(testing::matches_pytorch(name + " output", y, c.at("output")));
    std::vector<Tensor> wrt{x, w};
    if (b.defined()) wrt.push_back(b);
    auto grads = autograd::grad({(y * testing::decode_tensor(c.at("upstream"))).sum()}, wrt);
    EXPECT_TRUE(testing::matches_pytorch(name + " grad input", grads[0], c.at("grad_input")));
    EXPECT_TRUE(testing::matches_pytorch(name + " grad weight", grads[1], c.at("grad_weight")));
    if (b.defined()) {
      EXPECT_TRUE(testing::matches_pytorch(name + " grad bias", grads[2], c.at("grad_bias")));
    }
    // The float32 (oneDNN) path on the same numbers.
    Tensor x32 = x.detach().to(kFloat32), w32 = w.detach().to(kFloat32);
    Tensor b32 = b.defined() ? b.detach().to(kFloat32) : Tensor();
    Tensor y32 = c.at("op") == "conv1d" ? F::conv1d(x32, w32, b32, options_of<1>(c))
                                        : F::conv2d(x32, w32, b32, options_of<2>(c));
    EXPECT_LT(max_diff(y32, testing::decode_tensor(c.at("output"))), 1e-4) << name << " float32";
    ++checked;
  }
  EXPECT_EQ(checked, 9);
}

// ---- modules ---------------------------------------------------------------------------------

std::string repr(const nn::Module& m) {
  std::ostringstream os;
  m.pretty_print(os);
  return os.str();
}

TEST(ConvModule, ReprLikePyTorch) {
  // Each expected string printed by torch 1.13's nn.Conv1d / nn.Conv2d with the same arguments.
  EXPECT_EQ(repr(*nn::Conv2d(1, 6, 5)), "Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1))");
  EXPECT_EQ(repr(*nn::Conv2d(nn::Conv2dOptions(64, 64, 3).padding(1).groups(16).bias(false))),
            "Conv2d(64, 64, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), groups=16, bias=False)");
  EXPECT_EQ(repr(*nn::Conv2d(nn::Conv2dOptions(4, 4, {2, 3}).padding(kSame).dilation(2))),
            "Conv2d(4, 4, kernel_size=(2, 3), stride=(1, 1), padding=same, dilation=(2, 2))");
  EXPECT_EQ(repr(*nn::Conv1d(nn::Conv1dOptions(4, 4, 3).padding(kValid).stride(2))),
            "Conv1d(4, 4, kernel_size=(3,), stride=(2,), padding=valid)");
  EXPECT_EQ(repr(*nn::Conv2d(nn::Conv2dOptions(4, 4, 3).padding({0, 0}).dilation({1, 1}))),
            "Conv2d(4, 4, kernel_size=(3, 3), stride=(1, 1))");
  EXPECT_EQ(repr(*nn::Conv1d(nn::Conv1dOptions(4, 8, 3).padding(1).dilation(2).groups(2).bias(false))),
            "Conv1d(4, 8, kernel_size=(3,), stride=(1,), padding=(1,), dilation=(2,), groups=2, bias=False)");
}

TEST(ConvModule, ParametersInitAndForward) {
  manual_seed(8);
  nn::Conv2d conv(nn::Conv2dOptions(4, 6, {3, 2}).stride(2).padding(1).groups(2));
  EXPECT_EQ(conv->weight.sizes(), IntArrayRef({6, 2, 3, 2}));
  EXPECT_EQ(conv->bias.sizes(), IntArrayRef({6}));
  EXPECT_EQ(conv->named_parameters().keys(), (std::vector<std::string>{"weight", "bias"}));
  const double bound = 1 / std::sqrt(12.0);  // fan_in = 2 * 3 * 2
  EXPECT_LE(conv->weight.abs().max().item<float>(), bound);
  EXPECT_LE(conv->bias.abs().max().item<float>(), bound);
  EXPECT_GT(conv->weight.abs().max().item<float>(), bound * 0.7);
  Tensor y = conv(randn({3, 4, 7, 6}));
  EXPECT_EQ(y.sizes(), IntArrayRef({3, 6, 4, 4}));
  y.sum().backward();
  EXPECT_EQ(conv->weight.grad().sizes(), conv->weight.sizes());
  EXPECT_EQ(conv->bias.grad().sizes(), conv->bias.sizes());
  auto copy = std::dynamic_pointer_cast<nn::Conv2dImpl>(conv->clone());
  ASSERT_TRUE(copy);
  EXPECT_TRUE(copy->weight.equal(conv->weight));
  EXPECT_FALSE(copy->weight.is_same(conv->weight));

  nn::Conv1d c1(nn::Conv1dOptions(3, 5, 4).padding(kSame).bias(false));
  EXPECT_FALSE(c1->bias.defined());
  EXPECT_EQ(c1->named_parameters().keys(), std::vector<std::string>{"weight"});
  EXPECT_EQ(c1(randn({2, 3, 11})).sizes(), IntArrayRef({2, 5, 11}));
  EXPECT_EQ(c1(randn({3, 11})).sizes(), IntArrayRef({5, 11}));
}

// ---- errors ----------------------------------------------------------------------------------

TEST(ConvErrors, NameTheOpAndTheShapes) {
  Tensor x = randn({2, 4, 5, 5}), w = randn({6, 2, 3, 3});
  auto g2 = F::Conv2dFuncOptions().groups(2);
  EXPECT_THAT(error_of([&] { F::conv2d(randn({2, 4, 5, 5, 1}), w, g2); }),
              HasSubstr("conv2d: expected a 3-d (unbatched) or 4-d (batched) input [N, C, H, W], got input of shape [2, 4, 5, 5, 1]"));
  EXPECT_THAT(error_of([&] { F::conv1d(x, randn({6, 4, 3})); }),
              HasSubstr("conv1d: expected a 2-d (unbatched) or 3-d (batched) input [N, C, L], got input of shape [2, 4, 5, 5]"));
  EXPECT_THAT(error_of([&] { F::conv2d(x, randn({6, 4, 3})); }),
              HasSubstr("conv2d: expected a 4-d weight [out_channels, in_channels / groups, kH, kW], got weight of shape [6, 4, 3]"));
  EXPECT_THAT(error_of([&] { F::conv2d(x, w); }),
              HasSubstr("conv2d: expected input of shape [2, 4, 5, 5] to have 2 channels (weight [6, 2, 3, 3] takes 2 per "
                        "group, times groups=1), got 4 channels"));
  EXPECT_THAT(error_of([&] { F::conv2d(x, randn({5, 2, 3, 3}), g2); }),
              HasSubstr("conv2d: out_channels (weight.size(0) = 5) must be divisible by groups=2, got weight of shape "
                        "[5, 2, 3, 3]"));
  EXPECT_THAT(error_of([&] { F::conv2d(randn({2, 4, 2, 5}), w, g2); }),
              HasSubstr("conv2d: kernel of weight [6, 2, 3, 3] (spanning 3 with dilation=(1, 1)) is larger than the padded "
                        "input (2 = 2 + 0 padding in spatial dim 0 of input [2, 4, 2, 5])"));
  EXPECT_THAT(error_of([&] { F::conv2d(x, w, F::Conv2dFuncOptions().groups(2).stride({1, 0})); }),
              HasSubstr("conv2d: stride must be positive, got stride=(1, 0)"));
  EXPECT_THAT(error_of([&] { F::conv2d(x, w, F::Conv2dFuncOptions().groups(2).stride(-1)); }),
              HasSubstr("conv2d: stride must be positive, got stride=(-1, -1)"));
  EXPECT_THAT(error_of([&] { F::conv2d(x, w, F::Conv2dFuncOptions().groups(2).stride(2).padding(kSame)); }),
              HasSubstr("conv2d: padding=same needs stride 1, got stride=(2, 2)"));
  EXPECT_THAT(error_of([&] { F::conv2d(x, w.to(kFloat64), g2); }),
              HasSubstr("conv2d: expected input and weight to have the same dtype, got float32 and float64"));
  EXPECT_THROW(F::conv2d(x, w.to(kFloat64), g2), TypeError);
  EXPECT_THAT(error_of([&] { F::conv2d(x, w, randn({6}, kFloat64), g2); }),
              HasSubstr("conv2d: expected bias to have the dtype of input and weight, got float64 and float32"));
  EXPECT_THAT(error_of([&] { F::conv2d(x, w, randn({5}), g2); }),
              HasSubstr("conv2d: expected a 1-d bias of 6 elements (weight [6, 2, 3, 3]), got bias of shape [5]"));
  EXPECT_THAT(error_of([&] { F::conv2d(x, w, F::Conv2dFuncOptions().groups(0)); }),
              HasSubstr("conv2d: groups must be positive, got groups=0"));
  EXPECT_THAT(error_of([&] { F::conv2d(x, w, g2.dilation(0)); }),
              HasSubstr("conv2d: dilation must be positive, got dilation=(0, 0)"));
  EXPECT_THAT(error_of([&] { F::conv2d(x, w, F::Conv2dFuncOptions().groups(2).padding({-1, 0})); }),
              HasSubstr("conv2d: padding must be non-negative, got padding=(-1, 0)"));
  EXPECT_THAT(error_of([&] { F::conv1d(randn({2, 3, 2}), randn({4, 3, 3}), F::Conv1dFuncOptions().stride(2).padding(kSame)); }),
              HasSubstr("conv1d: padding=same needs stride 1, got stride=(2,)"));
}

TEST(ConvErrors, ModuleOptions) {
  EXPECT_THAT(error_of([] { nn::Conv2d(nn::Conv2dOptions(6, 4, 3).groups(4)); }),
              HasSubstr("Conv2d: in_channels=6 must be divisible by groups=4"));
  EXPECT_THAT(error_of([] { nn::Conv2d(nn::Conv2dOptions(4, 6, 3).groups(4)); }),
              HasSubstr("Conv2d: out_channels=6 must be divisible by groups=4"));
  EXPECT_THAT(error_of([] { nn::Conv1d(nn::Conv1dOptions(4, 6, 3).stride(2).padding(kSame)); }),
              HasSubstr("Conv1d: padding=same needs stride 1, got stride=(2,)"));
  EXPECT_THAT(error_of([] { nn::Conv2d(nn::Conv2dOptions(4, 6, 0)); }),
              HasSubstr("Conv2d: kernel_size must be positive, got kernel_size=(0, 0)"));
  EXPECT_THAT(error_of([] { nn::Conv2d(nn::Conv2dOptions(4, 6, {1, 2, 3})); }),
              HasSubstr("ExpandingArray: expected 2 values, got 3 ([1, 2, 3])"));
  nn::Conv2d conv(3, 4, 3);
  EXPECT_THAT(error_of([&] { conv(randn({2, 2, 5, 5})); }), HasSubstr("conv2d: expected input of shape [2, 2, 5, 5] to have 3 channels"));
}

}  // namespace
}  // namespace cohort
