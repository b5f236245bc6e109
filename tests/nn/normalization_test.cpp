// Normalisation through nn: batch norm against PyTorch's values over 3 training steps and an eval
// step (tests/fixtures/pool_norm.json), layer/group norm values, RMSNorm against its formula, state-dict
// names, reprs and errors. Instance norm and the distances against PyTorch: norm_fixture_test.cpp.
// The ops' values, strided inputs and gradients are in the op table (tests/ops/op_table_nn_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/pytorch_fixture.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cohort/autograd/engine.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/autograd/node.h"
#include "cohort/core/generator.h"
#include "cohort/nn/batchnorm.h"
#include "cohort/nn/functional/distance.h"
#include "cohort/nn/normalization.h"
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

const json& load_fixture() { return testing::load_fixture("pool_norm.json"); }

// ---- PyTorch's values ------------------------------------------------------------------------

template <class Impl>
void run_batch_norm_case(const json& c) {
  const std::string name = c.at("name");
  nn::BatchNormOptions o(c.at("num_features").get<int64_t>());
  o.eps(c.at("eps").get<double>()).affine(c.at("affine").get<bool>());
  o.track_running_stats(c.at("track_running_stats").get<bool>());
  o.momentum(c.at("momentum").is_null() ? std::nullopt : std::optional<double>(c.at("momentum").get<double>()));
  auto bn = std::make_shared<Impl>(o);
  bn->to(kFloat64);
  if (o.affine()) {
    NoGradGuard no_grad;
    bn->weight.copy_(testing::decode_tensor(c.at("weight")));
    bn->bias.copy_(testing::decode_tensor(c.at("bias")));
  }
  int step = 0;
  for (const json& s : c.at("steps")) {
    const std::string what = name + " step " + std::to_string(++step);
    Tensor x = testing::decode_tensor(s.at("input")).requires_grad_();
    Tensor y = bn->forward(x);
    EXPECT_TRUE(testing::matches_pytorch(what + " output", y, s.at("output")));
    std::vector<Tensor> wrt{x};
    if (o.affine()) wrt.push_back(bn->weight), wrt.push_back(bn->bias);
    auto g = autograd::grad({(y * testing::decode_tensor(s.at("upstream"))).sum()}, wrt);
    EXPECT_TRUE(testing::matches_pytorch(what + " grad input", g[0], s.at("grad_input")));
    if (o.affine()) {
      EXPECT_TRUE(testing::matches_pytorch(what + " grad weight", g[1], s.at("grad_weight")));
      EXPECT_TRUE(testing::matches_pytorch(what + " grad bias", g[2], s.at("grad_bias")));
    }
  }
  if (o.track_running_stats()) {
    EXPECT_TRUE(testing::matches_pytorch(name + " running_mean", bn->running_mean, c.at("running_mean")));
    EXPECT_TRUE(testing::matches_pytorch(name + " running_var", bn->running_var, c.at("running_var")));
    EXPECT_EQ(bn->num_batches_tracked.template item<int64_t>(), c.at("num_batches_tracked").get<int64_t>()) << name;
  } else {
    EXPECT_TRUE(c.at("running_mean").is_null());
  }
  bn->eval();
  const json& e = c.at("eval");
  Tensor x = testing::decode_tensor(e.at("input")).requires_grad_();
  Tensor y = bn->forward(x);
  EXPECT_TRUE(testing::matches_pytorch(name + " eval output", y, e.at("output")));
  auto g = autograd::grad({(y * testing::decode_tensor(e.at("upstream"))).sum()}, {x});
  EXPECT_TRUE(testing::matches_pytorch(name + " eval grad input", g[0], e.at("grad_input")));
}

TEST(NormFixture, BatchNormMatchesPyTorchOverTrainingStepsAndEval) {
  const json fixture = load_fixture();
  int checked = 0;
  for (const json& c : fixture.at("batch_norm")) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    if (c.at("module") == "BatchNorm1d") {
      run_batch_norm_case<nn::BatchNorm1dImpl>(c);
    } else {
      run_batch_norm_case<nn::BatchNorm2dImpl>(c);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

TEST(NormFixture, LayerAndGroupNormMatchPyTorch) {
  const json fixture = load_fixture();
  int checked = 0;
  for (const json& c : fixture.at("norm")) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    Tensor x = testing::decode_tensor(c.at("input")).requires_grad_();
    const bool affine = !c.at("weight").is_null();
    Tensor w = affine ? testing::decode_tensor(c.at("weight")).requires_grad_() : Tensor();
    Tensor b = affine ? testing::decode_tensor(c.at("bias")).requires_grad_() : Tensor();
    Tensor y = c.at("op") == "layer_norm"
                   ? F::layer_norm(x, F::LayerNormFuncOptions(c.at("arg").get<std::vector<int64_t>>()).weight(w).bias(b))
                   : F::group_norm(x, F::GroupNormFuncOptions(c.at("arg").get<int64_t>()).weight(w).bias(b));
    EXPECT_TRUE(testing::matches_pytorch(name + " output", y, c.at("output")));
    std::vector<Tensor> wrt{x};
    if (affine) wrt.push_back(w), wrt.push_back(b);
    auto g = autograd::grad({(y * testing::decode_tensor(c.at("upstream"))).sum()}, wrt);
    EXPECT_TRUE(testing::matches_pytorch(name + " grad input", g[0], c.at("grad_input")));
    if (affine) {
      EXPECT_TRUE(testing::matches_pytorch(name + " grad weight", g[1], c.at("grad_weight")));
      EXPECT_TRUE(testing::matches_pytorch(name + " grad bias", g[2], c.at("grad_bias")));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 4);
}

// ---- modules ---------------------------------------------------------------------------------

std::string repr(const nn::Module& m) {
  std::ostringstream os;
  m.pretty_print(os);
  return os.str();
}

TEST(NormModule, ReprLikePyTorch) {
  // Each expected string printed by torch 1.13's modules with the same arguments.
  EXPECT_EQ(repr(*nn::BatchNorm2d(6)), "BatchNorm2d(6, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)");
  EXPECT_EQ(repr(*nn::BatchNorm1d(nn::BatchNorm1dOptions(4).momentum(std::nullopt).affine(false).track_running_stats(false))),
            "BatchNorm1d(4, eps=1e-05, momentum=None, affine=False, track_running_stats=False)");
  EXPECT_EQ(repr(*nn::BatchNorm1d(nn::BatchNorm1dOptions(4).eps(1e-3).momentum(0.2))),
            "BatchNorm1d(4, eps=0.001, momentum=0.2, affine=True, track_running_stats=True)");
  EXPECT_EQ(repr(*nn::LayerNorm(nn::LayerNormOptions({5}))), "LayerNorm((5,), eps=1e-05, elementwise_affine=True)");
  EXPECT_EQ(repr(*nn::LayerNorm(nn::LayerNormOptions({3, 4}).elementwise_affine(false).eps(1e-6))),
            "LayerNorm((3, 4), eps=1e-06, elementwise_affine=False)");
  EXPECT_EQ(repr(*nn::GroupNorm(2, 6)), "GroupNorm(2, 6, eps=1e-05, affine=True)");
  EXPECT_EQ(repr(*nn::GroupNorm(nn::GroupNormOptions(3, 6).affine(false))), "GroupNorm(3, 6, eps=1e-05, affine=False)");
  EXPECT_EQ(repr(*nn::InstanceNorm1d(3)),
            "InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=False, track_running_stats=False)");
  EXPECT_EQ(repr(*nn::InstanceNorm2d(nn::InstanceNorm2dOptions(4).affine(true).track_running_stats(true))),
            "InstanceNorm2d(4, eps=1e-05, momentum=0.1, affine=True, track_running_stats=True)");
  EXPECT_EQ(repr(*nn::LocalResponseNorm(2)), "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)");
  // RMSNorm is PyTorch 2.x's (its repr there).
  EXPECT_EQ(repr(*nn::RMSNorm(nn::RMSNormOptions({5}))), "RMSNorm((5,), eps=None, elementwise_affine=True)");
  EXPECT_EQ(repr(*nn::RMSNorm(nn::RMSNormOptions({2, 3}).eps(1e-6).elementwise_affine(false))),
            "RMSNorm((2, 3), eps=1e-06, elementwise_affine=False)");
}

TEST(NormModule, InstanceNormParametersAndBuffers) {
  nn::InstanceNorm1d plain(3);
  EXPECT_TRUE(plain->state_dict().keys().empty());
  nn::InstanceNorm2d full(nn::InstanceNorm2dOptions(3).affine(true).track_running_stats(true));
  full->to(kFloat64);
  EXPECT_EQ(full->state_dict().keys(),
            (std::vector<std::string>{"weight", "bias", "running_mean", "running_var", "num_batches_tracked"}));
  EXPECT_TRUE(full->weight.equal(ones({3})));
  EXPECT_TRUE(full->running_var.equal(ones({3})));
  // Each channel of each sample comes out with mean 0 and (biased) variance 1.
  manual_seed(3);
  Tensor y = full(randn({2, 3, 4, 5}, kFloat64));
  EXPECT_LT(y.mean({2, 3}).abs().max().item<double>(), 1e-12);
  EXPECT_LT((y.var({2, 3}, false) - 1).abs().max().item<double>(), 1e-4);
  // The counter is PyTorch's: instance norm never advances it.
  EXPECT_EQ(full->num_batches_tracked.item<int64_t>(), 0);
  EXPECT_FALSE(full->running_mean.equal(zeros({3})));
  EXPECT_EQ(nn::InstanceNorm1d(3)(randn({3, 6})).sizes(), IntArrayRef({3, 6}));  // unbatched
  nn::InstanceNorm3d in3(2);
  EXPECT_EQ(in3(randn({1, 2, 2, 2, 3})).sizes(), IntArrayRef({1, 2, 2, 2, 3}));
}

// x / sqrt(mean(x^2) + eps) * w over the trailing dims, eps the dtype's machine epsilon by default.
TEST(NormModule, RMSNormIsItsFormula) {
  manual_seed(5);
  Tensor x = randn({2, 3, 4}, kFloat64);
  nn::RMSNorm rms(nn::RMSNormOptions({3, 4}));
  EXPECT_EQ(rms->named_parameters().keys(), std::vector<std::string>{"weight"});
  EXPECT_TRUE(rms->weight.equal(ones({3, 4})));
  rms->to(kFloat64);
  {
    NoGradGuard no_grad;
    rms->weight.copy_(randn({3, 4}, kFloat64));
  }
  const double eps64 = 2.220446049250313e-16;
  Tensor want = x / sqrt((x * x).mean({1, 2}, true) + eps64) * rms->weight;
  EXPECT_TRUE(rms(x).allclose(want, 1e-14, 1e-14));
  // Hand-worked: [3, 4] has mean square 12.5; with eps 0.5 the scale is 1 / sqrt(13).
  Tensor row = tensor({3.0, 4.0}, kFloat64);
  EXPECT_TRUE(F::rms_norm(row, F::RMSNormFuncOptions({2}).eps(0.5)).allclose(row / std::sqrt(13.0)));
  // float32: float32's epsilon; bfloat16 computes in float32 and rounds once.
  Tensor tiny = full({4}, 1e-4, kFloat32);
  const double eps32 = 1.1920928955078125e-07;
  EXPECT_NEAR(F::rms_norm(tiny, F::RMSNormFuncOptions({4}))[0].item<float>(), 1e-4 / std::sqrt(1e-8 + eps32), 1e-6);
  Tensor narrow = x.to(kBFloat16);
  Tensor got = F::rms_norm(narrow, F::RMSNormFuncOptions({4}));
  EXPECT_EQ(got.dtype(), kBFloat16);
  Tensor wide = narrow.to(kFloat32);
  EXPECT_TRUE(got.equal((wide / sqrt((wide * wide).mean({2}, true) + eps32)).to(kBFloat16)));
  // Gradients through the composition.
  Tensor leaf = x.clone().requires_grad_();
  nn::RMSNorm bare(nn::RMSNormOptions({4}).elementwise_affine(false));
  EXPECT_TRUE(bare->named_parameters().keys().empty());
  bare(leaf).pow(2).sum().backward();
  EXPECT_TRUE(leaf.grad().defined());
}

TEST(NormModule, StateDictNamesAndBuffers) {
  nn::BatchNorm2d bn(3);
  EXPECT_EQ(bn->state_dict().keys(),
            (std::vector<std::string>{"weight", "bias", "running_mean", "running_var", "num_batches_tracked"}));
  EXPECT_EQ(bn->named_buffers().keys(), (std::vector<std::string>{"running_mean", "running_var", "num_batches_tracked"}));
  EXPECT_EQ(bn->num_batches_tracked.dtype(), kInt64);
  EXPECT_EQ(bn->num_batches_tracked.dim(), 0);
  EXPECT_TRUE(bn->weight.equal(ones({3})));
  EXPECT_TRUE(bn->running_var.equal(ones({3})));
  nn::BatchNorm2d bare(nn::BatchNorm2dOptions(3).affine(false).track_running_stats(false));
  EXPECT_TRUE(bare->state_dict().keys().empty());

  // Training updates the running stats and the counter; eval leaves them; clone copies them.
  manual_seed(24);
  bn(randn({4, 3, 2, 2}));
  bn(randn({4, 3, 2, 2}));
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 2);
  Tensor mean_before = bn->running_mean.clone();
  bn->eval();
  bn(randn({4, 3, 2, 2}));
  EXPECT_TRUE(bn->running_mean.equal(mean_before));
  EXPECT_EQ(bn->num_batches_tracked.item<int64_t>(), 2);
  auto copy = std::dynamic_pointer_cast<nn::BatchNorm2dImpl>(bn->clone());
  ASSERT_TRUE(copy);
  EXPECT_TRUE(copy->running_mean.equal(bn->running_mean));
  EXPECT_FALSE(copy->running_mean.is_same(bn->running_mean));
  EXPECT_FALSE(copy->is_training());

  nn::LayerNorm ln(nn::LayerNormOptions({4}));
  EXPECT_EQ(ln->named_parameters().keys(), (std::vector<std::string>{"weight", "bias"}));
  Tensor y = ln(randn({2, 3, 4}));
  EXPECT_LT(y.mean({2}).abs().max().item<float>(), 1e-5);
  nn::GroupNorm gn(2, 4);
  EXPECT_EQ(gn(randn({2, 4, 3})).sizes(), IntArrayRef({2, 4, 3}));
}

// ---- errors ----------------------------------------------------------------------------------

TEST(NormErrors, NameTheOpAndTheShapes) {
  nn::BatchNorm2d bn2(3);
  nn::BatchNorm1d bn1(3);
  EXPECT_THAT(error_of([&] { bn2(randn({2, 3, 4})); }),
              HasSubstr("BatchNorm2d: expected a 4-d input [N, C, H, W], got input of shape [2, 3, 4]"));
  EXPECT_THAT(error_of([&] { bn1(randn({2, 3, 4, 4})); }),
              HasSubstr("BatchNorm1d: expected a 2-d [N, C] or 3-d [N, C, L] input, got input of shape [2, 3, 4, 4]"));
  EXPECT_THAT(error_of([&] { bn1(randn({1, 3})); }),
              HasSubstr("batch_norm: expected more than 1 value per channel when training, got input of shape [1, 3]"));
  EXPECT_THAT(error_of([&] { bn2(randn({2, 4, 3, 3})); }),
              HasSubstr("batch_norm: expected weight of shape [4] (the channels of input [2, 4, 3, 3]), got weight of shape [3]"));
  EXPECT_THAT(error_of([&] { F::batch_norm(randn({2, 3}), Tensor(), Tensor()); }),
              HasSubstr("batch_norm: running_mean and running_var must be defined in evaluation mode"));
  EXPECT_THAT(error_of([&] { bn2(randn({2, 3, 3, 3}, kFloat64)); }),
              HasSubstr("batch_norm: expected weight to have the dtype of input (float64), got float32"));
  EXPECT_THAT(error_of([&] { F::layer_norm(randn({2, 3, 4}), F::LayerNormFuncOptions({3})); }),
              HasSubstr("layer_norm: expected an input whose last dims are normalized_shape=[3], got input of shape [2, 3, 4]"));
  EXPECT_THAT(error_of([&] { F::group_norm(randn({2, 6, 4}), F::GroupNormFuncOptions(4)); }),
              HasSubstr("group_norm: expected the 6 channels of input [2, 6, 4] to divide into num_groups=4 groups"));
  EXPECT_THAT(error_of([] { nn::GroupNorm(4, 6); }), HasSubstr("GroupNorm: num_channels=6 must divide into num_groups=4 groups"));

  EXPECT_THAT(error_of([] { nn::InstanceNorm2d(3)(randn({2, 3})); }),
              HasSubstr("InstanceNorm2d: expected a 3-d (unbatched) or 4-d input, got 2 dims [2, 3]"));
  EXPECT_THAT(error_of([] { F::instance_norm(randn({2, 3})); }),
              HasSubstr("instance_norm: expected input [N, C, ...] with at least one dim after C, got 2 dims [2, 3]"));
  EXPECT_THAT(error_of([] { F::instance_norm(randn({2, 3, 1})); }),
              HasSubstr("instance_norm: expected more than 1 value per channel when using the input's statistics"));
  EXPECT_THAT(error_of([] { F::instance_norm(randn({2, 3, 4}), F::InstanceNormFuncOptions().weight(ones({4}))); }),
              HasSubstr("instance_norm: weight must be [3] (one per channel of input [2, 3, 4]), got [4]"));
  EXPECT_THAT(error_of([] { F::instance_norm(randn({2, 3, 4}), F::InstanceNormFuncOptions().use_input_stats(false)); }),
              HasSubstr("instance_norm: use_input_stats(false) needs running_mean and running_var"));
  EXPECT_THAT(error_of([] { F::rms_norm(randn({2, 3}), F::RMSNormFuncOptions({4})); }),
              HasSubstr("rms_norm: expected an input whose last dims are normalized_shape=[4], got input of shape [2, 3]"));
  EXPECT_THAT(error_of([] { F::rms_norm(randn({2, 4}), F::RMSNormFuncOptions({4}).weight(ones({2}))); }),
              HasSubstr("rms_norm: weight must have normalized_shape [4], got [2]"));
  EXPECT_THAT(error_of([] { nn::RMSNorm(nn::RMSNormOptions({0})); }), HasSubstr("RMSNorm: normalized_shape must be positive"));
  EXPECT_THAT(error_of([] { F::local_response_norm(randn({2, 3}), F::LocalResponseNormFuncOptions(2)); }),
              HasSubstr("local_response_norm: expected input [N, C, ...] with at least 3 dims, got 2 dims [2, 3]"));
  EXPECT_THAT(error_of([] { F::normalize(randn({2, 3}), F::NormalizeFuncOptions().out(zeros({3}))); }),
              HasSubstr("normalize: out must be float32[2, 3]"));
}

TEST(NormFunctional, NormalizeWritesOut) {
  Tensor x = tensor({3.0, 4.0, 0.0, 0.0}).view({2, 2});
  Tensor out = zeros({2, 2});
  Tensor r = F::normalize(x, F::NormalizeFuncOptions().out(out));
  EXPECT_TRUE(r.is_same(out));
  EXPECT_TRUE(out.allclose(tensor({0.6, 0.8, 0.0, 0.0}).view({2, 2})));
}

}  // namespace
}  // namespace cohort
