// Normalisation: batch norm (fused kernels) against a composed float64 reference and PyTorch's values
// over 3 training steps and an eval step (tests/fixtures/pool_norm.json), layer/group norm values,
// gradcheck, state-dict names, reprs and errors.
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
#include "cohort/nn/normalization.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "support/error_of.h"
#include "support/gradcheck.h"

namespace cohort {
namespace {

namespace F = nn::functional;
using ::testing::HasSubstr;
using json = nlohmann::json;
using testing::error_of;

double max_diff(const Tensor& a, const Tensor& b) {
  return (a.detach().to(kFloat64) - b.detach().to(kFloat64)).abs().max().item<double>();
}

const json& load_fixture() { return testing::load_fixture("pool_norm.json"); }

// ---- batch norm against a composition of ops ----------------------------------------------------

// Batch statistics over every dim but 1, composed from mean/var (autograd differentiates it).
Tensor composed_batch_norm(const Tensor& x, const Tensor& w, const Tensor& b, double eps) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
  Shape per_channel(static_cast<size_t>(x.dim()), 1);
  per_channel[1] = x.size(1);
  Tensor y = (x - x.mean(dims, true)) * rsqrt(var(x, dims, false, true) + eps);
  return y * w.reshape(per_channel) + b.reshape(per_channel);
}

TEST(BatchNormKernel, MatchesComposedReferenceIncludingStridedInput) {
  manual_seed(21);
  for (const Shape& shape : {Shape{6, 3}, Shape{4, 3, 5}, Shape{2, 3, 4, 5}}) {
    for (bool strided : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "input " << IntArrayRef(shape) << (strided ? " non-contiguous" : ""));
      Tensor x = randn(shape, kFloat64), w = randn({3}, kFloat64), b = randn({3}, kFloat64);
      if (strided) x = testing::make_noncontiguous(x);
      x.requires_grad_(), w.requires_grad_(), b.requires_grad_();
      Tensor y = F::batch_norm(x, Tensor(), Tensor(), w, b, /*training=*/true, 0.1, 1e-5);
      Tensor y_ref = composed_batch_norm(x, w, b, 1e-5);
      EXPECT_LT(max_diff(y, y_ref), 1e-12);
      Tensor up = randn(shape, kFloat64);
      auto g = autograd::grad({(y * up).sum()}, {x, w, b});
      auto g_ref = autograd::grad({(y_ref * up).sum()}, {x, w, b});
      for (int i = 0; i < 3; ++i) EXPECT_LT(max_diff(g[i], g_ref[i]), 1e-10) << "grad " << i;
      // float32 through the same kernel
      Tensor y32 = F::batch_norm(x.detach().to(kFloat32), Tensor(), Tensor(), w.detach().to(kFloat32),
                                 b.detach().to(kFloat32), true, 0.1, 1e-5);
      EXPECT_LT(max_diff(y32, y_ref), 1e-5);
    }
  }
}

TEST(BatchNormStats, MeanAndBiasedVarianceInFloat64) {
  manual_seed(22);
  for (const Shape& shape : {Shape{6, 3}, Shape{4, 3, 5}, Shape{2, 3, 7, 5}}) {
    for (DType dtype : {kFloat32, kFloat64}) {
      for (bool strided : {false, true}) {
        SCOPED_TRACE(::testing::Message() << IntArrayRef(shape) << " " << dtype << (strided ? " non-contiguous" : ""));
        // An offset of 1000 would make a one-pass sum of squares lose digits.
        Tensor x = randn(shape, dtype) + 1000;
        if (strided) x = testing::make_noncontiguous(x);
        std::vector<int64_t> dims{0};
        for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
        Tensor x64 = x.to(kFloat64);
        auto [mean, variance] = F::batch_norm_stats(x);
        EXPECT_EQ(mean.dtype(), kFloat64);
        EXPECT_EQ(mean.sizes(), Shape{3});
        // float32 inputs are summed in float lanes (Note [Batch norm fast path]): ~1e-7 relative.
        const bool f32 = dtype == kFloat32;
        EXPECT_LT(max_diff(mean, x64.mean(dims)), f32 ? 1e-3 : 1e-11);  // the mean is about 1000
        EXPECT_LT(max_diff(variance, var(x64, dims, false)), f32 ? 1e-5 : 1e-9);
      }
    }
  }
  EXPECT_THAT(error_of([] { F::batch_norm_stats(randn({3})); }),
              HasSubstr("batch_norm_stats: expected a non-empty input [N, C, ...] of at least 2 dims, got input of "
                        "shape [3]"));
  EXPECT_THAT(error_of([] { F::batch_norm_stats(ones({2, 3}, kInt64)); }),
              HasSubstr("expected a floating-point input (float32 or float64), got int64"));
}

TEST(BatchNormGradcheck, TrainingAndEval) {
  manual_seed(22);
  Tensor rm = randn({3}, kFloat64), rv = rand({3}, kFloat64) + 0.5;
  for (bool training : {true, false}) {
    auto fn = [&](const std::vector<Tensor>& t) {
      // Copies of the running stats: training updates them in place.
      return std::vector<Tensor>{F::batch_norm(t[0], rm.clone(), rv.clone(), t[1], t[2], training, 0.1, 1e-5)};
    };
    const std::string name = training ? "batch_norm training" : "batch_norm eval";
    for (const Shape& shape : {Shape{4, 3}, Shape{2, 3, 2, 3}}) {
      std::vector<Tensor> in{randn(shape, kFloat64), randn({3}, kFloat64), randn({3}, kFloat64)};
      EXPECT_TRUE(testing::gradcheck(fn, in, 1e-6, 1e-5, 1e-3, name));
      EXPECT_TRUE(testing::gradcheck_noncontiguous(fn, in, 1e-6, 1e-5, 1e-3, name + " (non-contiguous)"));
    }
  }
  auto no_affine = [](const std::vector<Tensor>& t) {
    return std::vector<Tensor>{F::batch_norm(t[0], Tensor(), Tensor(), F::BatchNormFuncOptions().training(true))};
  };
  EXPECT_TRUE(testing::gradcheck(no_affine, {randn({3, 2, 4}, kFloat64)}, 1e-6, 1e-5, 1e-3, "batch_norm no affine"));
}

TEST(NormGradcheck, LayerAndGroupNorm) {
  manual_seed(23);
  auto ln = [](const std::vector<Tensor>& t) {
    return std::vector<Tensor>{F::layer_norm(t[0], F::LayerNormFuncOptions({3, 4}).weight(t[1]).bias(t[2]))};
  };
  EXPECT_TRUE(testing::gradcheck(ln, {randn({2, 3, 4}, kFloat64), randn({3, 4}, kFloat64), randn({3, 4}, kFloat64)},
                                 1e-6, 1e-5, 1e-3, "layer_norm"));
  auto gn = [](const std::vector<Tensor>& t) {
    return std::vector<Tensor>{F::group_norm(t[0], F::GroupNormFuncOptions(2).weight(t[1]).bias(t[2]))};
  };
  EXPECT_TRUE(testing::gradcheck(gn, {randn({2, 4, 3, 2}, kFloat64), randn({4}, kFloat64), randn({4}, kFloat64)},
                                 1e-6, 1e-5, 1e-3, "group_norm"));
}

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
}

}  // namespace
}  // namespace cohort
