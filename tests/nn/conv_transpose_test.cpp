// Transposed convolution through nn: F::conv_transpose1d/2d and the ConvTranspose modules'
// forward(input, output_size) against PyTorch's values and gradients, the modules' reprs and
// state-dict shapes (tests/fixtures/conv_transpose.json from generate_conv_transpose.py), and
// errors. The op's values and gradients of every order are in the op table (op_table_nn_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cohort/autograd/engine.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/nn/conv.h"
#include "cohort/ops/backend.h"
#include "cohort/ops/convolution.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "support/error_of.h"
#include "support/pytorch_fixture.h"

namespace cohort {
namespace {

namespace F = nn::functional;
using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::error_of;

std::string repr(const nn::Module& m) {
  std::ostringstream os;
  m.pretty_print(os);
  return os.str();
}

template <size_t D>
ExpandingArray<D> arr(const json& j) {  // [v] stands for v in every dim, as PyTorch's int arguments
  auto v = j.get<std::vector<int64_t>>();
  return v.size() == 1 ? ExpandingArray<D>(v[0]) : ExpandingArray<D>(v);
}

template <size_t D>
nn::ConvTransposeOptions<D> module_options(const json& c, int64_t in, int64_t out, ExpandingArray<D> kernel) {
  return nn::ConvTransposeOptions<D>(in, out, kernel)
      .stride(arr<D>(c.at("stride")))
      .padding(arr<D>(c.at("padding")))
      .output_padding(arr<D>(c.at("output_padding")))
      .groups(c.at("groups").get<int64_t>())
      .dilation(arr<D>(c.at("dilation")));
}

// The case's output: F::conv_transpose*d, or the module with the case's weights and output_size.
template <size_t D>
Tensor run_case(const json& c, const Tensor& x, const Tensor& w, const Tensor& b) {
  if (c.at("output_size").is_null()) {
    auto o = F::ConvTransposeFuncOptions<D>()
                 .bias(b)
                 .stride(arr<D>(c.at("stride")))
                 .padding(arr<D>(c.at("padding")))
                 .output_padding(arr<D>(c.at("output_padding")))
                 .groups(c.at("groups").get<int64_t>())
                 .dilation(arr<D>(c.at("dilation")));
    if constexpr (D == 1)
      return F::conv_transpose1d(x, w, o);
    else
      return F::conv_transpose2d(x, w, o);
  }
  const int64_t groups = c.at("groups").get<int64_t>();
  std::array<int64_t, D> kernel{};
  for (size_t d = 0; d < D; ++d) kernel[d] = w.size(static_cast<int64_t>(2 + d));
  auto options = module_options<D>(c, w.size(0), w.size(1) * groups, kernel).bias(b.defined());
  nn::ModuleHolder<std::conditional_t<D == 1, nn::ConvTranspose1dImpl, nn::ConvTranspose2dImpl>> m(options);
  m->to(x.dtype());
  {
    NoGradGuard no_grad;
    m->weight.copy_(w);
    if (b.defined()) m->bias.copy_(b);
  }
  const auto sizes = c.at("output_size").get<std::vector<int64_t>>();
  Tensor y = m(x, IntArrayRef(sizes));
  return y;
}

TEST(ConvTransposeFixture, MatchesPyTorchValuesAndGradients) {
  const json& fixture = testing::load_fixture("conv_transpose.json");
  int checked = 0;
  for (const json& c : fixture.at("cases")) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    const bool one_d = c.at("op") == "conv_transpose1d";
    Tensor x = testing::decode_tensor(c.at("input")).requires_grad_();
    Tensor w = testing::decode_tensor(c.at("weight")).requires_grad_();
    Tensor b = c.at("bias").is_null() ? Tensor() : testing::decode_tensor(c.at("bias")).requires_grad_();
    Tensor y = one_d ? run_case<1>(c, x, w, b) : run_case<2>(c, x, w, b);
    EXPECT_TRUE(testing::matches_pytorch(name + " output", y, c.at("output")));
    // The module cases' weight and bias are the module's copies: only the input's gradient there.
    std::vector<Tensor> wrt{x};
    Tensor loss = (y * testing::decode_tensor(c.at("upstream"))).sum();
    if (c.at("output_size").is_null()) {
      wrt.push_back(w);
      if (b.defined()) wrt.push_back(b);
      auto grads = autograd::grad({loss}, wrt);
      EXPECT_TRUE(testing::matches_pytorch(name + " grad input", grads[0], c.at("grad_input")));
      EXPECT_TRUE(testing::matches_pytorch(name + " grad weight", grads[1], c.at("grad_weight")));
      if (b.defined()) EXPECT_TRUE(testing::matches_pytorch(name + " grad bias", grads[2], c.at("grad_bias")));
    } else {
      auto grads = autograd::grad({loss}, wrt);
      EXPECT_TRUE(testing::matches_pytorch(name + " grad input", grads[0], c.at("grad_input")));
    }
    // The float32 (oneDNN) path on the same numbers.
    Tensor x32 = x.detach().to(kFloat32), w32 = w.detach().to(kFloat32);
    Tensor b32 = b.defined() ? b.detach().to(kFloat32) : Tensor();
    Tensor y32 = one_d ? run_case<1>(c, x32, w32, b32) : run_case<2>(c, x32, w32, b32);
    EXPECT_LT(testing::max_abs_diff(y32, testing::decode_tensor(c.at("output"))), 1e-4) << name << " float32";
    ++checked;
  }
  EXPECT_EQ(checked, 12);
}

TEST(ConvTransposeModule, ReprAndStateDictLikePyTorch) {
  const json& fixture = testing::load_fixture("conv_transpose.json");
  int checked = 0;
  for (const json& m : fixture.at("modules")) {
    const std::string want = m.at("repr");
    SCOPED_TRACE(want);
    const int64_t in = m.at("in_channels"), out = m.at("out_channels");
    std::shared_ptr<nn::Module> module;
    if (m.at("dims") == 1) {
      module = nn::ConvTranspose1d(module_options<1>(m, in, out, arr<1>(m.at("kernel_size"))).bias(m.at("bias")))
                   .ptr();
    } else {
      module = nn::ConvTranspose2d(module_options<2>(m, in, out, arr<2>(m.at("kernel_size"))).bias(m.at("bias")))
                   .ptr();
    }
    EXPECT_EQ(repr(*module), want);
    std::vector<std::string> names;
    for (const auto& [name, shape] : m.at("state").items()) names.push_back(name);
    const auto state = module->state_dict();
    ASSERT_EQ(state.size(), names.size());
    for (const auto& name : names) {
      ASSERT_TRUE(state.contains(name)) << name;
      EXPECT_EQ(state[name].sizes(), IntArrayRef(m.at("state").at(name).get<std::vector<int64_t>>())) << name;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

TEST(ConvTransposeModule, InitForwardBackwardAndClone) {
  manual_seed(8);
  nn::ConvTranspose2d up(nn::ConvTranspose2dOptions(4, 6, {3, 2}).stride(2).padding(1).output_padding(1).groups(2));
  EXPECT_EQ(up->weight.sizes(), IntArrayRef({4, 3, 3, 2}));
  EXPECT_EQ(up->named_parameters().keys(), (std::vector<std::string>{"weight", "bias"}));
  const double bound = 1 / std::sqrt(18.0);  // PyTorch's fan_in of the transposed weight: 3 * 3 * 2
  EXPECT_LE(up->weight.abs().max().item<float>(), bound);
  EXPECT_GT(up->weight.abs().max().item<float>(), bound * 0.7);
  EXPECT_LE(up->bias.abs().max().item<float>(), bound);
  Tensor y = up(randn({3, 4, 5, 4}));
  EXPECT_EQ(y.sizes(), IntArrayRef({3, 6, 10, 7}));  // (5 - 1) 2 - 2 + 2 + 1 + 1, (4 - 1) 2 - 2 + 1 + 1 + 1
  EXPECT_EQ(up(randn({4, 5, 4})).sizes(), IntArrayRef({6, 10, 7}));
  y.sum().backward();
  EXPECT_EQ(up->weight.grad().sizes(), up->weight.sizes());
  EXPECT_EQ(up->bias.grad().sizes(), up->bias.sizes());
  auto copy = std::dynamic_pointer_cast<nn::ConvTranspose2dImpl>(up->clone());
  ASSERT_TRUE(copy);
  EXPECT_TRUE(copy->weight.equal(up->weight));
  EXPECT_FALSE(copy->weight.is_same(up->weight));

  // output_size picks the output_padding for this call only.
  nn::ConvTranspose1d up1(nn::ConvTranspose1dOptions(2, 3, 3).stride(3).bias(false));
  EXPECT_FALSE(up1->bias.defined());
  EXPECT_EQ(up1(randn({2, 2, 4})).sizes(), IntArrayRef({2, 3, 12}));
  EXPECT_EQ(up1->forward(randn({2, 2, 4}), {{14}}).sizes(), IntArrayRef({2, 3, 14}));
  EXPECT_EQ(up1->forward(randn({2, 4}), {{3, 13}}).sizes(), IntArrayRef({3, 13}));
  EXPECT_EQ(up1(randn({2, 2, 4})).sizes(), IntArrayRef({2, 3, 12}));
}

// Its definition on a case small enough to write out: a 2x2 input, a 2x2 kernel, stride 2 places
// each input value times the kernel in its own 2x2 block.
TEST(ConvTransposeOp, StrideTwoTilesTheKernel) {
  Tensor x = tensor({1.0, 2.0, 3.0, 4.0}, kFloat64).view({1, 1, 2, 2});
  Tensor w = tensor({1.0, 10.0, 100.0, 1000.0}, kFloat64).view({1, 1, 2, 2});
  Tensor want = tensor({1.0, 10.0, 2.0, 20.0, 100.0, 1000.0, 200.0, 2000.0, 3.0, 30.0, 4.0, 40.0, 300.0, 3000.0,
                        400.0, 4000.0},
                       kFloat64)
                    .view({1, 1, 4, 4});
  EXPECT_TRUE(conv_transpose2d(x, w, {}, 2).equal(want));
  EXPECT_TRUE(conv_transpose2d(x.to(kFloat32), w.to(kFloat32), {}, 2).equal(want.to(kFloat32)));
  // output_padding adds a row and a column that no input reaches: the bias only.
  Tensor b = tensor({0.5}, kFloat64);
  Tensor padded = conv_transpose2d(x, w, b, 2, 0, 1);
  EXPECT_EQ(padded.sizes(), IntArrayRef({1, 1, 5, 5}));
  EXPECT_TRUE(padded.narrow(2, 0, 4).narrow(3, 0, 4).equal(want + 0.5));
  EXPECT_TRUE(padded.narrow(2, 4, 1).equal(full({1, 1, 1, 5}, 0.5, kFloat64)));
  EXPECT_TRUE(conv_transpose2d(x.to(kFloat32), w.to(kFloat32), b.to(kFloat32), 2, 0, 1).equal(padded.to(kFloat32)));
}

// The transposed convolution is the convolution's adjoint: <conv_t(x, w), y> = <x, conv(y, w)>.
TEST(ConvTransposeOp, IsTheAdjointOfConvolution) {
  manual_seed(3);
  for (DType dtype : {kFloat64, kFloat32}) {
    Tensor x = randn({2, 4, 5, 6}, dtype), w = randn({4, 3, 3, 3}, dtype);
    Tensor t = conv_transpose2d(x, w, {}, 2, 1, 1, 2);  // [2, 6, 10, 12]
    Tensor y = randn(t.sizes(), dtype);
    Tensor c = conv2d(y, w, {}, 2, 1, 1, 2);
    EXPECT_EQ(c.sizes(), x.sizes());
    const double lhs = (t * y).sum().item<double>(), rhs = (x * c).sum().item<double>();
    EXPECT_NEAR(lhs, rhs, (dtype == kFloat64 ? 1e-10 : 1e-3) * (1 + std::abs(lhs)));
  }
}

// The float32 gradients (oneDNN, whose right padding is negative with output_padding) against the
// float64 ones (plain loops), with the default algorithms and forcing Winograd where it fits: the op
// table compares values only in float32.
TEST(ConvTransposeOp, Float32GradientsMatchFloat64) {
  struct Geometry {
    Shape x, w;
    std::vector<int64_t> stride, padding, output_padding, dilation;
    int64_t groups;
  };
  const std::vector<Geometry> cases = {
      {{2, 4, 5, 4}, {4, 3, 3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, 2},
      {{1, 3, 4, 6}, {3, 2, 2, 3}, {3, 2}, {0, 1}, {2, 1}, {1, 1}, 1},
      {{2, 2, 4, 3}, {2, 3, 2, 3}, {1, 1}, {0, 1}, {1, 1}, {2, 3}, 1},  // output_padding >= stride: plain loops
      {{2, 8, 6, 6}, {8, 8, 3, 3}, {1, 1}, {1, 1}, {0, 0}, {1, 1}, 1},  // stride 1, 3x3: Winograd-shaped
  };
  manual_seed(12);
  const ConvAlgorithm saved = conv_algorithm();
  for (ConvAlgorithm algorithm : {ConvAlgorithm::Auto, ConvAlgorithm::Winograd}) {
    set_conv_algorithm(algorithm);
    for (const Geometry& c : cases) {
      Tensor x = randn(c.x, kFloat64), w = randn(c.w, kFloat64), b = randn({c.w[1] * c.groups}, kFloat64);
      std::vector<Tensor> grads[2];
      int k = 0;
      for (DType dtype : {kFloat64, kFloat32}) {
        Tensor xs = x.to(dtype).requires_grad_(), ws = w.to(dtype).requires_grad_(), bs = b.to(dtype).requires_grad_();
        Tensor y = conv_transpose2d(xs, ws, bs, c.stride, c.padding, c.output_padding, c.groups, c.dilation);
        Tensor up = (arange(y.numel(), kFloat64).view(y.sizes()) * 0.37).sin().to(dtype);
        grads[k++] = autograd::grad({(y * up).sum()}, {xs, ws, bs});
      }
      for (size_t i = 0; i < 3; ++i)
        EXPECT_LT(testing::max_abs_diff(grads[0][i], grads[1][i]), 1e-4 * (1 + grads[0][i].abs().max().item<double>()))
            << "input " << i << " of x " << IntArrayRef(c.x) << " w " << IntArrayRef(c.w);
    }
  }
  set_conv_algorithm(saved);
}

TEST(ConvTransposeErrors, NameTheOpAndTheShapes) {
  Tensor x = randn({2, 4, 5, 5}), w = randn({4, 3, 3, 3});
  EXPECT_THAT(error_of([&] { conv_transpose2d(randn({2, 4, 5}).unsqueeze(0).unsqueeze(0), w); }),
              HasSubstr("conv_transpose2d: expected a 3-d (unbatched) or 4-d (batched) input [N, C, H, W], got input "
                        "of shape [1, 1, 2, 4, 5]"));
  EXPECT_THAT(error_of([&] { conv_transpose2d(x, randn({4, 3, 3})); }),
              HasSubstr("conv_transpose2d: expected a 4-d weight [in_channels, out_channels / groups, kH, kW], got "
                        "weight of shape [4, 3, 3]"));
  EXPECT_THAT(error_of([&] { conv_transpose2d(x, randn({3, 3, 3, 3})); }),
              HasSubstr("conv_transpose2d: expected input of shape [2, 4, 5, 5] to have 3 channels (weight [3, 3, 3, "
                        "3] is [in_channels, out_channels / groups, kH, kW]), got 4 channels"));
  EXPECT_THAT(error_of([&] { conv_transpose2d(x, w, {}, 1, 0, 0, 3); }),
              HasSubstr("conv_transpose2d: in_channels (weight.size(0) = 4) must be divisible by groups=3, got weight "
                        "of shape [4, 3, 3, 3]"));
  EXPECT_THAT(error_of([&] { conv_transpose2d(x, w, randn({3}), 1, 0, 0, 2); }),
              HasSubstr("conv_transpose2d: expected a 1-d bias of 6 elements (weight [4, 3, 3, 3] times groups=2), "
                        "got bias of shape [3]"));
  EXPECT_THAT(error_of([&] { conv_transpose2d(x, w, {}, 2, 0, {1, 2}); }),
              HasSubstr("conv_transpose2d: output_padding must be smaller than either stride or dilation, got "
                        "output_padding=(1, 2), stride=(2, 2), dilation=(1, 1)"));
  EXPECT_THAT(error_of([&] { conv_transpose2d(x, w, {}, 1, 0, 1); }),
              HasSubstr("output_padding must be smaller than either stride or dilation, got output_padding=(1, 1), "
                        "stride=(1, 1), dilation=(1, 1)"));
  EXPECT_NO_THROW(conv_transpose2d(x, w, {}, 1, 0, 1, 1, 2));  // the dilation allows it
  EXPECT_THAT(error_of([&] { conv_transpose2d(x, w, {}, 1, -1); }),
              HasSubstr("conv_transpose2d: padding must be non-negative, got padding=(-1, -1)"));
  EXPECT_THAT(error_of([&] { conv_transpose2d(x, w, {}, {1, 0}); }),
              HasSubstr("conv_transpose2d: stride must be positive, got stride=(1, 0)"));
  EXPECT_THAT(error_of([&] { conv_transpose2d(x, w, {}, 1, 0, 0, 0); }),
              HasSubstr("conv_transpose2d: groups must be positive, got groups=0"));
  EXPECT_THAT(error_of([&] { conv_transpose2d(randn({1, 4, 1, 1}), w, {}, 1, 2); }),
              HasSubstr("conv_transpose2d: the output would have size -1 in spatial dim 0 = (1 - 1) * 1 - 2 * 2 + 1 * "
                        "(3 - 1) + 0 + 1 (input [1, 4, 1, 1], weight [4, 3, 3, 3]); hint: reduce the padding"));
  EXPECT_THAT(error_of([&] { conv_transpose1d(randn({2, 4, 5}), randn({4, 3, 3}), {}, {1, 2}); }),
              HasSubstr("conv_transpose1d: expected stride to have 1 or 1 values, got 2"));
  EXPECT_THROW(conv_transpose2d(x, w.to(kFloat64)), TypeError);

  EXPECT_THAT(error_of([] { nn::ConvTranspose2d(nn::ConvTranspose2dOptions(6, 4, 3).groups(4)); }),
              HasSubstr("ConvTranspose2d: in_channels=6 must be divisible by groups=4"));
  EXPECT_THAT(error_of([] { nn::ConvTranspose2d(nn::ConvTranspose2dOptions(4, 4, 3).stride(2).output_padding(2)); }),
              HasSubstr("ConvTranspose2d: output_padding must be non-negative and smaller than either stride or "
                        "dilation, got output_padding=(2, 2), stride=(2, 2), dilation=(1, 1)"));
  nn::ConvTranspose2d up(nn::ConvTranspose2dOptions(4, 3, 3).stride(2).padding(1));
  EXPECT_THAT(error_of([&] { up->forward(x, {{8, 10}}); }),
              HasSubstr("ConvTranspose2d: requested an output size of [8, 10], but valid sizes range from [9, 9] to "
                        "[10, 10] (for an input of shape [2, 4, 5, 5])"));
  EXPECT_THAT(error_of([&] { up->forward(x, {{9}}); }),
              HasSubstr("ConvTranspose2d: output_size must have 2 or 4 elements for an input of shape [2, 4, 5, 5], "
                        "got output_size=[9]"));
}

}  // namespace
}  // namespace cohort
