// GradScaler against torch.amp.GradScaler's documented semantics, step by step (PyTorch 1.13's CPU
// build has no _amp_foreach_non_finite_check_and_unscale_ / _amp_update_scale_ kernels, so there is
// no dumped trajectory to replay): the fused unscale, growth after growth_interval clean steps,
// backoff and skipped steps on inf and NaN, the once-per-step rules, the exact resume through a
// checkpoint, and a training run whose float16-range gradients overflow at known steps.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include <cohort/cohort.h>
#include <cohort/io/checkpoint.h>
#include <cohort/optim/grad_scaler.h>
#include <cohort/parallel/data_parallel.h>

#include "support/devices.h"
#include "support/error_of.h"

using namespace cohort;
using cohort::testing::error_of;
using ::testing::HasSubstr;
namespace F = cohort::nn::functional;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

Tensor floats(std::vector<float> v) { return tensor(v); }

// One parameter w (2 elements) whose gradient the test sets by hand.
struct Fixture {
  Tensor w = zeros({2}).requires_grad_();
  optim::SGD opt{{w}, optim::SGDOptions(1.0)};
  void set_grad(std::vector<float> g) { w.mutable_grad() = floats(std::move(g)); }
};

TEST(GradScaler, DefaultsArePyTorchs) {
  amp::GradScaler scaler;
  EXPECT_EQ(scaler.get_scale(), 65536.0);
  EXPECT_EQ(scaler.get_growth_factor(), 2.0);
  EXPECT_EQ(scaler.get_backoff_factor(), 0.5);
  EXPECT_EQ(scaler.get_growth_interval(), 2000);
  EXPECT_EQ(scaler.get_growth_tracker(), 0);
  EXPECT_TRUE(scaler.is_enabled());
  auto state = scaler.state_dict();
  EXPECT_EQ(state.size(), 5u);
  EXPECT_EQ(state["scale"], 65536.0);
  EXPECT_EQ(state["_growth_tracker"], 0.0);
}

TEST(GradScaler, OptionsAreChecked) {
  EXPECT_THAT(error_of([] { optim::GradScaler(optim::GradScalerOptions().growth_factor(1.0)); }),
              HasSubstr("growth_factor must be > 1, got 1"));
  EXPECT_THAT(error_of([] { optim::GradScaler(optim::GradScalerOptions().backoff_factor(1.5)); }),
              HasSubstr("backoff_factor must be in (0, 1), got 1.5"));
  EXPECT_THAT(error_of([] { optim::GradScaler(optim::GradScalerOptions().growth_interval(0)); }),
              HasSubstr("growth_interval must be >= 1, got 0"));
  EXPECT_THAT(error_of([] { optim::GradScaler(optim::GradScalerOptions().init_scale(1e39)); }),
              HasSubstr("init_scale must be positive and finite"));
}

TEST(GradScaler, UnscaleIsOnePassAndFindsInfAndNaN) {
  // float32 contiguous (the fused loop), finite: exact division by a power of two.
  Tensor a = floats({65536.f, -3.f * 65536.f, 0.f, 1.f});
  EXPECT_FALSE(non_finite_check_and_unscale_({a}, 1.0f / 65536));
  EXPECT_TRUE(a.equal(floats({1.f, -3.f, 0.f, 1.f / 65536})));
  // inf and NaN anywhere in any tensor are found; the other values are still unscaled.
  Tensor b = floats({2.f, kInf, 4.f}), c = floats({kNaN, 8.f});
  EXPECT_TRUE(non_finite_check_and_unscale_({b, c}, 0.5f));
  EXPECT_EQ(b[0].item<float>(), 1.f);
  EXPECT_TRUE(std::isinf(b[1].item<float>()));
  EXPECT_TRUE(std::isnan(c[0].item<float>()));
  EXPECT_EQ(c[1].item<float>(), 4.f);
  EXPECT_TRUE(non_finite_check_and_unscale_({floats({-kInf})}, 1.0f));
  // A large gradient (split over threads) with one inf at its end.
  Tensor big = full({200001}, 4.0);
  big[200000].fill_(kInf);
  EXPECT_TRUE(non_finite_check_and_unscale_({big}, 0.25f));
  EXPECT_TRUE(big.narrow(0, 0, 200000).equal(ones({200000})));
  EXPECT_FALSE(non_finite_check_and_unscale_({Tensor(), zeros({0})}, 0.5f));
}

TEST(GradScaler, UnscaleOfOtherDTypesAndLayoutsMatchesFloat32) {
  Tensor base = floats({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}).reshape({2, 3}) * 1024.0;
  Tensor t = base.t();  // not contiguous
  EXPECT_FALSE(non_finite_check_and_unscale_({t}, 1.0f / 1024));
  EXPECT_TRUE(base.equal(floats({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}).reshape({2, 3})));
  for (DType dtype : {kFloat64, kBFloat16, kHalf}) {
    Tensor g = (floats({1.f, -2.f, 0.5f}) * 8.0).to(dtype);
    EXPECT_FALSE(non_finite_check_and_unscale_({g}, 0.125f)) << dtype;
    EXPECT_EQ(g.dtype(), dtype);
    EXPECT_TRUE(g.to(kFloat32).equal(floats({1.f, -2.f, 0.5f}))) << dtype;
    Tensor bad = floats({1.f, kInf}).to(dtype);
    EXPECT_TRUE(non_finite_check_and_unscale_({bad}, 0.5f)) << dtype;
  }
  // float64 beyond float32's range is finite.
  Tensor huge = tensor(std::vector<double>{1e300});
  EXPECT_FALSE(non_finite_check_and_unscale_({huge}, 1.0f));
  EXPECT_THAT(error_of([] { non_finite_check_and_unscale_({ones({2}, TensorOptions(kInt64))}, 1.f); }),
              HasSubstr("expected floating-point gradients, got"));
}

TEST(GradScaler, ScaleMultipliesByTheScale) {
  amp::GradScaler scaler(amp::GradScalerOptions().init_scale(1024));
  Tensor loss = scalar_tensor(0.5);
  EXPECT_EQ(scaler.scale(loss).item<double>(), 512.0);
  EXPECT_EQ(scaler.scale(loss).dim(), 0);
  // A 16-bit loss is scaled in float32, where 65504 * 2^16 does not overflow.
  Tensor half_loss = scalar_tensor(60000.0).to(kHalf);
  Tensor scaled = amp::GradScaler().scale(half_loss);
  EXPECT_EQ(scaled.dtype(), kFloat32);
  EXPECT_EQ(scaled.item<double>(), 60000.0 * 65536);
  auto both = scaler.scale(std::vector<Tensor>{loss, ones({2})});
  EXPECT_TRUE(both[1].equal(full({2}, 1024.0)));
  amp::GradScaler off(amp::GradScalerOptions().enabled(false));
  EXPECT_TRUE(off.scale(loss).is_same(loss));
  EXPECT_EQ(off.get_scale(), 1.0);
  EXPECT_TRUE(off.state_dict().empty());
}

TEST(GradScaler, GrowsAfterGrowthIntervalCleanSteps) {
  Fixture f;
  amp::GradScaler scaler(amp::GradScalerOptions().init_scale(4).growth_interval(3));
  std::vector<double> scales;
  std::vector<int64_t> trackers;
  for (int step = 0; step < 7; ++step) {
    f.set_grad({4.f, 8.f});
    EXPECT_TRUE(scaler.step(f.opt));
    scaler.update();
    scales.push_back(scaler.get_scale());
    trackers.push_back(scaler.get_growth_tracker());
  }
  EXPECT_EQ(scales, (std::vector<double>{4, 4, 8, 8, 8, 16, 16}));
  EXPECT_EQ(trackers, (std::vector<int64_t>{1, 2, 0, 1, 2, 0, 1}));
}

TEST(GradScaler, InfAndNaNSkipTheStepAndBackOff) {
  Fixture f;
  amp::GradScaler scaler(amp::GradScalerOptions().init_scale(8).growth_interval(100));
  f.set_grad({8.f, 16.f});
  EXPECT_TRUE(scaler.step(f.opt));  // unscaled to (1, 2), then w -= grad
  scaler.update();
  EXPECT_TRUE(f.w.equal(floats({-1.f, -2.f})));
  EXPECT_EQ(scaler.get_growth_tracker(), 1);

  for (float bad : {kInf, kNaN, -kInf}) {
    const double before = scaler.get_scale();
    f.set_grad({bad, 16.f});
    EXPECT_FALSE(scaler.step(f.opt)) << bad;
    EXPECT_TRUE(scaler.found_inf(f.opt));
    scaler.update();
    EXPECT_TRUE(f.w.equal(floats({-1.f, -2.f}))) << "a step with " << bad << " changed the parameter";
    EXPECT_EQ(scaler.get_scale(), before * 0.5) << bad;
    EXPECT_EQ(scaler.get_growth_tracker(), 0);
  }
  EXPECT_EQ(scaler.get_scale(), 1.0);
  f.set_grad({1.f, 1.f});
  EXPECT_TRUE(scaler.step(f.opt));
  scaler.update();
  EXPECT_TRUE(f.w.equal(floats({-2.f, -3.f})));
}

TEST(GradScaler, UnscaleOncePerStepAsPyTorch) {
  Fixture f;
  amp::GradScaler scaler(amp::GradScalerOptions().init_scale(4));
  f.set_grad({8.f, 4.f});
  scaler.unscale_(f.opt);
  EXPECT_TRUE(f.w.grad().equal(floats({2.f, 1.f})));
  EXPECT_THAT(error_of([&] { scaler.unscale_(f.opt); }),
              HasSubstr("GradScaler::unscale_: already called for this SGD optimizer since the last update()"));
  EXPECT_TRUE(scaler.step(f.opt));  // does not unscale again
  EXPECT_TRUE(f.w.equal(floats({-2.f, -1.f})));
  EXPECT_THAT(error_of([&] { scaler.step(f.opt); }), HasSubstr("GradScaler::step: already called"));
  EXPECT_THAT(error_of([&] { scaler.unscale_(f.opt); }), HasSubstr("called after step()"));
  scaler.update();
  EXPECT_THAT(error_of([&] { scaler.update(); }), HasSubstr("GradScaler::update: no inf/NaN check ran"));
  f.set_grad({8.f, 4.f});
  scaler.unscale_(f.opt);  // allowed again after update()
  scaler.update(3.0);      // an explicit scale: the tracker stays
  EXPECT_EQ(scaler.get_scale(), 3.0);
  EXPECT_EQ(scaler.get_growth_tracker(), 1);
  EXPECT_THAT(error_of([&] { scaler.update(0.0); }), HasSubstr("must be positive and finite"));
}

TEST(GradScaler, TwoOptimizersBackOffWhenEitherOverflows) {
  Fixture a, b;
  amp::GradScaler scaler(amp::GradScalerOptions().init_scale(2));
  a.set_grad({2.f, 2.f});
  b.set_grad({kInf, 2.f});
  EXPECT_TRUE(scaler.step(a.opt));
  EXPECT_FALSE(scaler.step(b.opt));
  scaler.update();
  EXPECT_EQ(scaler.get_scale(), 1.0);
  EXPECT_TRUE(a.w.equal(floats({-1.f, -1.f})));
  EXPECT_TRUE(b.w.equal(zeros({2})));
}

TEST(GradScaler, DisabledIsThePlainOptimizer) {
  Fixture f;
  amp::GradScaler scaler(amp::GradScalerOptions().enabled(false));
  f.set_grad({kInf, 1.f});
  EXPECT_TRUE(scaler.step(f.opt));  // no check: the optimizer steps
  scaler.update();
  scaler.update();  // no bookkeeping, no error
  EXPECT_TRUE(std::isinf(f.w[0].item<float>()));
  scaler.load_state_dict({});  // ignored
}

TEST(GradScaler, StateDictRoundTripsAndIsChecked) {
  amp::GradScaler scaler(amp::GradScalerOptions().init_scale(3.0e-5).growth_interval(7).backoff_factor(0.25));
  Fixture f;
  f.set_grad({1.f, 1.f});
  scaler.step(f.opt);
  scaler.update();
  amp::GradScaler other;
  other.load_state_dict(scaler.state_dict());
  EXPECT_EQ(other.state_dict(), scaler.state_dict());
  EXPECT_EQ(other.get_scale(), static_cast<double>(3.0e-5f));
  EXPECT_EQ(other.get_growth_tracker(), 1);
  EXPECT_EQ(other.get_growth_interval(), 7);
  std::map<std::string, std::string> meta;
  scaler.save_metadata(meta, "amp.");
  amp::GradScaler third;
  third.load_metadata(meta, "amp.");
  EXPECT_EQ(third.state_dict(), scaler.state_dict());
  EXPECT_THAT(error_of([&] { third.load_state_dict({}); }), HasSubstr("saved from a disabled GradScaler"));
  EXPECT_THAT(error_of([&] { third.load_state_dict({{"scale", 2.0}}); }),
              HasSubstr("missing growth_factor, backoff_factor, growth_interval, _growth_tracker"));
  EXPECT_THAT(error_of([&] { third.load_metadata(meta); }), HasSubstr("no \"grad_scaler.scale\" in the metadata"));
}

// A small regression model trained with loss scaling, its gradients passed through float16's range (a
// float16 model's gradients would be those values): with a large initial scale they overflow, and those
// steps must be the skipped ones, exactly.
struct Net : nn::Cloneable<Net> {
  Net() { reset(); }
  void reset() override {
    fc1 = register_module("fc1", nn::Linear(4, 16));
    fc2 = register_module("fc2", nn::Linear(16, 1));
  }
  Tensor forward(const Tensor& x) { return fc2(F::tanh(fc1(x))); }
  nn::Linear fc1{nullptr}, fc2{nullptr};
};

struct ScaledRun {
  std::vector<bool> stepped, overflowed;
  std::vector<double> scales, losses;
  std::shared_ptr<Net> net;
};

// Steps [first, last) of one run; inputs with an inf at `poisoned` (an injected overflow at a step
// where the scale is small).
void train(ScaledRun& run, optim::SGD& opt, amp::GradScaler& scaler, int first, int last, int poisoned) {
  for (int step = first; step < last; ++step) {
    manual_seed(500 + step % 4);  // four batches, in turn
    Tensor x = randn({16, 4}), y = x.sum({1}, true).sin();
    if (step == poisoned) x[3][1].fill_(1e38).mul_(100.0);  // inf
    opt.zero_grad();
    Tensor loss = F::mse_loss(run.net->forward(x), y);
    scaler.scale(loss).backward();
    bool overflow = false;
    {
      NoGradGuard no_grad;
      for (const Tensor& p : run.net->parameters()) {
        p.grad().copy_(p.grad().to(kHalf));  // float16's range: beyond 65504 is inf
        overflow |= !cohort::isfinite(p.grad()).all().item<bool>();
      }
    }
    std::vector<Tensor> before;
    for (const Tensor& p : run.net->parameters()) before.push_back(p.detach().clone());
    bool stepped = scaler.step(opt);
    bool unchanged = true;
    for (size_t i = 0; i < before.size(); ++i) unchanged &= before[i].equal(run.net->parameters()[i]);
    EXPECT_EQ(unchanged, !stepped) << "step " << step;
    scaler.update();
    run.stepped.push_back(stepped);
    run.overflowed.push_back(overflow);
    run.scales.push_back(scaler.get_scale());
    run.losses.push_back(loss.item<double>());
  }
}

TEST(GradScaler, TrainingSkipsExactlyTheOverflowingSteps) {
  const int kSteps = 40, kPoisoned = 30;
  ScaledRun run;
  manual_seed(1);
  run.net = std::make_shared<Net>();
  optim::SGD opt(run.net->parameters(), optim::SGDOptions(0.05).momentum(0.9));
  amp::GradScaler scaler(amp::GradScalerOptions().init_scale(1 << 24).growth_interval(8));
  train(run, opt, scaler, 0, kSteps, kPoisoned);

  EXPECT_EQ(run.stepped.size(), static_cast<size_t>(kSteps));
  int skipped = 0;
  double scale = 1 << 24;
  int clean = 0;
  for (int s = 0; s < kSteps; ++s) {
    EXPECT_EQ(run.stepped[s], !run.overflowed[s]) << "step " << s;
    skipped += !run.stepped[s];
    // The scale follows the overflows: halved after each, doubled after 8 clean steps in a row.
    if (run.overflowed[s]) {
      scale *= 0.5;
      clean = 0;
    } else if (++clean == 8) {
      scale *= 2;
      clean = 0;
    }
    EXPECT_EQ(run.scales[s], scale) << "step " << s;
  }
  EXPECT_FALSE(run.stepped[kPoisoned]);
  EXPECT_TRUE(run.stepped[kPoisoned - 1]);
  EXPECT_GE(skipped, 3) << "the initial scale 2^24 should overflow float16 gradients a few times";
  EXPECT_LE(skipped, 14);
  auto window = [&](int from) {
    return (run.losses[from] + run.losses[from + 1] + run.losses[from + 2] + run.losses[from + 3]) / 4;
  };
  EXPECT_LT(window(kSteps - 4), 0.7 * window(0)) << "training did not make progress";
  std::string pattern;
  for (int s = 0; s < kSteps; ++s) pattern += run.stepped[s] ? '.' : 'x';
  std::cout << "steps (x: skipped): " << pattern << ", loss " << window(0) << " -> " << window(kSteps - 4) << std::endl;
}

TEST(GradScaler, ResumeFromACheckpointIsExact) {
  const int kSteps = 24, kSaveAt = 11, kPoisoned = 15;
  auto options = amp::GradScalerOptions().init_scale(1 << 20).growth_interval(4);
  auto sgd = optim::SGDOptions(0.05).momentum(0.9);
  ScaledRun whole;
  manual_seed(2);
  whole.net = std::make_shared<Net>();
  optim::SGD opt(whole.net->parameters(), sgd);
  amp::GradScaler scaler(options);
  train(whole, opt, scaler, 0, kSaveAt, kPoisoned);

  const auto path = std::filesystem::temp_directory_path() /
                    ("cohort-grad-scaler-" + std::to_string(getpid()) + ".safetensors");
  std::map<std::string, std::string> meta{{"step", std::to_string(kSaveAt)}};
  scaler.save_metadata(meta);
  const auto saved = scaler.state_dict();
  io::save_checkpoint(path, *whole.net, &opt, meta);
  train(whole, opt, scaler, kSaveAt, kSteps, kPoisoned);

  ScaledRun resumed;
  manual_seed(99);
  resumed.net = std::make_shared<Net>();
  optim::SGD opt2(resumed.net->parameters(), sgd);
  amp::GradScaler scaler2(options);
  auto loaded = io::load_checkpoint(path, *resumed.net, &opt2);
  std::filesystem::remove(path);
  scaler2.load_metadata(loaded);
  EXPECT_EQ(scaler2.state_dict(), saved);
  train(resumed, opt2, scaler2, kSaveAt, kSteps, kPoisoned);

  EXPECT_EQ(scaler2.state_dict(), scaler.state_dict());
  std::vector<bool> tail(whole.stepped.begin() + kSaveAt, whole.stepped.end());
  EXPECT_EQ(resumed.stepped, tail);
  std::vector<double> scales(whole.scales.begin() + kSaveAt, whole.scales.end());
  EXPECT_EQ(resumed.scales, scales);
  auto a = whole.net->named_parameters(), b = resumed.net->named_parameters();
  for (const auto& p : a) EXPECT_TRUE(p.value().equal(*b.find(p.key()))) << p.key();
}

// nn::DataParallel sums the replicas' gradients into the master's parameters, which the optimizer
// holds: scaling by a power of two and unscaling is exact, so the scaled run equals the plain one.
class GradScalerDataParallel : public cohort::testing::WithDevices<2> {};

TEST_F(GradScalerDataParallel, ScaledStepsEqualPlainSteps) {
  auto run = [&](bool scaled) {
    manual_seed(4);
    auto net = std::make_shared<Net>();
    nn::DataParallel<Net> dp(net, first(2));
    optim::SGD opt(net->parameters(), optim::SGDOptions(0.1));
    amp::GradScaler scaler(amp::GradScalerOptions().enabled(scaled));
    for (int step = 0; step < 3; ++step) {
      manual_seed(40 + step);
      Tensor x = randn({8, 4}), y = randn({8, 1});
      opt.zero_grad();
      scaler.scale(F::mse_loss(dp.forward(x), y)).backward();
      EXPECT_TRUE(scaler.step(opt));
      scaler.update();
    }
    EXPECT_EQ(scaler.get_scale(), scaled ? 65536.0 : 1.0);
    return net;
  };
  auto plain = run(false), scaled = run(true);
  auto a = plain->named_parameters(), b = scaled->named_parameters();
  for (const auto& p : a) EXPECT_TRUE(p.value().equal(*b.find(p.key()))) << p.key();
}

}  // namespace
