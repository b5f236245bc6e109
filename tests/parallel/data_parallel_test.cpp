// nn::DataParallel: the tutorial's sizes, PyTorch's semantics, buffers, errors, hooks, resync, and
// training that equals one device.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <set>

#include <cohort/cohort.h>
#include <cohort/models/model.h>
#include <cohort/parallel/data_parallel.h>

#include "support/error_of.h"
#include "support/devices.h"

using namespace cohort;
using cohort::testing::error_of;
using ::testing::HasSubstr;

namespace {

// The tutorial's Model: Linear(5, 2), recording the batch size each replica sees.
struct TutorialModel : nn::Cloneable<TutorialModel> {
  TutorialModel() { reset(); }
  void reset() override { fc = register_module("fc", nn::Linear(5, 2)); }
  Tensor forward(const Tensor& x) {
    std::lock_guard<std::mutex> l(*mutex);
    seen->push_back(x.size(0));
    return fc(x);
  }
  nn::Linear fc{nullptr};
  std::shared_ptr<std::mutex> mutex = std::make_shared<std::mutex>();
  std::shared_ptr<std::vector<int64_t>> seen = std::make_shared<std::vector<int64_t>>();  // shared by replicas
};

class DataParallel : public cohort::testing::WithDevices<8> {
 protected:
  void SetUp() override {
    WithDevices::SetUp();
    manual_seed(0);
  }
};

TEST_F(DataParallel, TutorialSizes) {
  struct Case { int devices; parallel::SplitRule rule; std::vector<int64_t> last; std::vector<int64_t> full; };
  std::vector<Case> cases{{2, parallel::kBalanced, {5, 5}, {15, 15}},
                          {3, parallel::kBalanced, {4, 3, 3}, {10, 10, 10}},
                          {3, parallel::kChunk, {4, 4, 2}, {10, 10, 10}},
                          {8, parallel::kBalanced, {2, 1, 1, 1, 1, 1, 1, 2}, {4, 4, 4, 4, 4, 4, 3, 3}},
                          {8, parallel::kChunk, {2, 2, 2, 2, 2}, {4, 4, 4, 4, 4, 4, 4, 2}}};
  Tensor data = randn({100, 5});
  for (const Case& c : cases) {
    auto model = std::make_shared<TutorialModel>();
    nn::DataParallel<TutorialModel> dp(model, first(c.devices), parallel::DataParallelOptions().rule(c.rule));
    std::vector<std::vector<int64_t>> per_batch;
    for (int64_t start = 0; start < 100; start += 30) {
      Tensor input = data.narrow(0, start, std::min<int64_t>(30, 100 - start));
      model->seen->clear();
      Tensor out = dp.forward(input);
      EXPECT_EQ(out.sizes(), Shape({input.size(0), 2}));
      auto seen = *model->seen;
      std::sort(seen.begin(), seen.end(), std::greater<>());
      per_batch.push_back(seen);
    }
    auto sorted = [](std::vector<int64_t> v) { std::sort(v.begin(), v.end(), std::greater<>()); return v; };
    EXPECT_EQ(per_batch[0], sorted(c.full)) << c.devices << " devices, rule " << c.rule;
    EXPECT_EQ(per_batch[3], sorted(c.last)) << c.devices << " devices, rule " << c.rule;
  }
}

struct LossNet : nn::Cloneable<LossNet> {
  LossNet() { reset(); }
  void reset() override { fc = register_module("fc", nn::Linear(3, 1)); }
  Tensor forward(const Tensor& x, const Tensor& y) { return nn::functional::mse_loss(fc(x), y); }  // a 0-d output
  nn::Linear fc{nullptr};
};

TEST_F(DataParallel, ScalarOutputIsTheSampleWeightedMeanAndGradientsMatch) {
  auto net = std::make_shared<LossNet>();
  Tensor x = randn({10, 3}), y = randn({10, 1});
  Tensor single = net->forward(x, y);
  single.backward();
  Tensor g_single = net->fc->weight.grad().clone();
  net->zero_grad();
  nn::DataParallel<LossNet> dp(net, first(3));
  Tensor loss = dp.forward(x, y);  // 4, 3, 3
  EXPECT_EQ(loss.dim(), 0);
  EXPECT_NEAR(loss.item<float>(), single.item<float>(), 1e-5);
  loss.backward();
  EXPECT_TRUE(allclose(net->fc->weight.grad(), g_single, 1e-4, 1e-5));
}

// A gradient penalty (the gradient w.r.t. the input, made with create_graph, in the loss) through
// DataParallel: the second backward runs through the replicas' convolution, pooling and batch-norm
// double-backward nodes and the broadcast links, and gives the master one device's gradients.
struct PenaltyNet : nn::Cloneable<PenaltyNet> {
  PenaltyNet() { reset(); }
  void reset() override {
    conv = register_module("conv", nn::Conv2d(nn::Conv2dOptions(1, 2, 3).padding(1)));
    bn = register_module("bn", nn::BatchNorm2d(2));
    fc = register_module("fc", nn::Linear(8, 1));
  }
  Tensor forward(const Tensor& x) {
    return fc(nn::functional::max_pool2d(bn(conv(x)).tanh(), nn::functional::MaxPool2dFuncOptions(2)).flatten(1));
  }
  nn::Conv2d conv{nullptr};
  nn::BatchNorm2d bn{nullptr};
  nn::Linear fc{nullptr};
};

TEST_F(DataParallel, GradientPenaltyThroughReplicasEqualsOneDevice) {
  auto net = std::make_shared<PenaltyNet>();
  net->eval();  // batch statistics differ per replica in training; the running ones do not
  Tensor x = randn({6, 1, 4, 4}).requires_grad_();
  auto penalised = [&](const Tensor& out) {
    Tensor dx = autograd::grad({out.sum()}, {x}, {}, std::nullopt, /*create_graph=*/true)[0];
    return out.square().mean() + dx.square().sum();
  };
  penalised(net->forward(x)).backward();
  std::vector<Tensor> single;
  for (const Tensor& p : net->parameters()) single.push_back(p.grad().clone());
  net->zero_grad();
  nn::DataParallel<PenaltyNet> dp(net, first(3));
  penalised(dp.forward(x)).backward();
  std::vector<Tensor> params = net->parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    ASSERT_TRUE(params[i].grad().defined()) << "parameter " << i;
    EXPECT_TRUE(allclose(params[i].grad(), single[i], 1e-4, 1e-5)) << "parameter " << i;
  }
}

// A model with an embedding trains under DataParallel: the embedding's backward builds its gradient
// on each replica's device (it used to build it on cpu:0 and fail on every other device).
struct EmbeddingNet : nn::Cloneable<EmbeddingNet> {
  EmbeddingNet() { reset(); }
  void reset() override {
    emb = register_module("emb", nn::Embedding(nn::EmbeddingOptions(20, 4).padding_idx(0)));
    fc = register_module("fc", nn::Linear(4, 1));
  }
  Tensor forward(const Tensor& tokens) { return fc(emb(tokens).mean(1)); }
  nn::Embedding emb{nullptr};
  nn::Linear fc{nullptr};
};

TEST_F(DataParallel, EmbeddingBackwardOnEveryDevice) {
  auto net = std::make_shared<EmbeddingNet>();
  Tensor tokens = randint(0, 20, {6, 5});
  net->forward(tokens).sum().backward();
  Tensor g_single = net->emb->weight.grad().clone();
  net->zero_grad();
  nn::DataParallel<EmbeddingNet> dp(net, first(3));
  dp.forward(tokens).sum().backward();  // 2, 2, 2 sequences
  EXPECT_EQ(net->emb->weight.grad().device(), Device("cpu:0"));
  EXPECT_TRUE(allclose(net->emb->weight.grad(), g_single, 1e-5, 1e-6));
  EXPECT_EQ(net->emb->weight.grad()[0].abs().sum().item<float>(), 0.0f);  // the padding row gets none
}

// A buffer that requires grad gets its gradient under DataParallel as on one device: each replica's
// copy is linked to the master's, as a parameter is.
struct GradBufferNet : nn::Cloneable<GradBufferNet> {
  GradBufferNet() { reset(); }
  void reset() override {
    fc = register_module("fc", nn::Linear(3, 2));
    scale = register_buffer("scale", full({2}, 1.5).requires_grad_());
  }
  Tensor forward(const Tensor& x) { return fc(x) * scale; }
  nn::Linear fc{nullptr};
  Tensor scale;
};

TEST_F(DataParallel, ABufferThatRequiresGradGetsItsGradient) {
  auto net = std::make_shared<GradBufferNet>();
  Tensor x = randn({6, 3});
  (net->forward(x) * net->forward(x)).sum().backward();
  Tensor g_single = net->scale.grad().clone();
  net->scale.mutable_grad() = Tensor();
  net->zero_grad();
  nn::DataParallel<GradBufferNet> dp(net, first(2));
  Tensor y = dp.forward(x);
  (y * y).sum().backward();
  ASSERT_TRUE(net->scale.grad().defined());
  EXPECT_TRUE(allclose(net->scale.grad(), g_single, 1e-5, 1e-6));
}

// A forward hook on a submodule runs once per replica, with the replica's module and chunk
// (PyTorch's rule), and a hook added or removed later follows; hooks on the wrapped module itself
// still run once per call.
TEST_F(DataParallel, ForwardHooksOnSubmodulesRunInEveryReplica) {
  auto model = std::make_shared<TutorialModel>();
  nn::DataParallel<TutorialModel> dp(model, first(2));
  std::mutex m;
  std::vector<int64_t> seen;
  std::set<const nn::Module*> modules;
  dp.forward(randn({10, 5}));  // replicas exist before the hook: it must reach them anyway
  unsigned h = model->fc->register_forward_hook([&](nn::Module& mod, const std::vector<Tensor>& in, const Tensor& out) {
    std::lock_guard<std::mutex> l(m);
    seen.push_back(in[0].size(0));
    modules.insert(&mod);
    return out;
  });
  dp.forward(randn({10, 5}));
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, (std::vector<int64_t>{5, 5}));
  EXPECT_EQ(modules.size(), 2u);
  EXPECT_EQ(modules.count(model->fc.get()), 0u);  // the replicas' modules, not the master's
  model->fc->remove_hook(h);
  seen.clear();
  dp.forward(randn({10, 5}));
  EXPECT_TRUE(seen.empty());
}

TEST_F(DataParallel, DeviceErrors) {
  auto model = std::make_shared<TutorialModel>();
  EXPECT_THAT(error_of([&] { nn::DataParallel<TutorialModel>(model, {}); }), HasSubstr("the device list is empty"));
  EXPECT_THAT(error_of([&] { nn::DataParallel<TutorialModel>(model, {"cpu:0", "cpu:9"}); }),
              HasSubstr("cpu:9 does not exist"));
  model->to(Device("cpu:1"));
  nn::DataParallel<TutorialModel> dp(model, first(2));
  EXPECT_THAT(error_of([&] { dp.forward(randn({4, 5}, TensorOptions().device("cpu:1"))); }),
              HasSubstr("the first device cpu:0, but parameter 'fc.weight' is on cpu:1"));
}

struct NoInput : nn::Cloneable<NoInput> {
  NoInput() { reset(); }
  void reset() override { w = register_parameter("w", ones({2})); }
  Tensor forward() { ++calls; return w * 3; }
  Tensor w;
  int calls = 0;
};

TEST_F(DataParallel, NoInputAndSingleDeviceCallTheModule) {
  auto net = std::make_shared<NoInput>();
  nn::DataParallel<NoInput> dp(net, first(4));
  EXPECT_TRUE(allclose(dp.forward(), full({2}, 3.0)));
  EXPECT_EQ(net->calls, 1);  // the master itself, once
  EXPECT_TRUE(dp.replicas().empty());
  auto model = std::make_shared<TutorialModel>();
  nn::DataParallel<TutorialModel> one(model, first(1));
  one.forward(randn({6, 5}));
  nn::DataParallel<TutorialModel> batch_of_one(model, first(4));
  batch_of_one.forward(randn({1, 5}));
  EXPECT_EQ(*model->seen, std::vector<int64_t>({6, 1}));
  EXPECT_TRUE(one.replicas().empty() && batch_of_one.replicas().empty());
}

TEST_F(DataParallel, StateDictHasNoPrefixAndHooksRunOncePerCall) {
  auto model = std::make_shared<TutorialModel>();
  nn::DataParallel<TutorialModel> dp(model, first(3));
  EXPECT_EQ(dp.state_dict().keys(), model->state_dict().keys());
  EXPECT_EQ(dp.parameters().size(), 2u);
  int pre = 0, post = 0;
  model->register_forward_pre_hook([&](nn::Module&, const std::vector<Tensor>& in) { ++pre; EXPECT_EQ(in[0].size(0), 9); });
  model->register_forward_hook([&](nn::Module&, const std::vector<Tensor>&, const Tensor& out) { ++post; return out; });
  dp.forward(randn({9, 5}));
  EXPECT_EQ(pre, 1);
  EXPECT_EQ(post, 1);
}

TEST_F(DataParallel, StepsCopyNoParameters) {
  auto model = std::make_shared<TutorialModel>();
  nn::DataParallel<TutorialModel> dp(model, first(3));
  optim::SGD opt(dp.parameters(), optim::SGDOptions(0.1));
  for (int step = 0; step < 2; ++step) {
    opt.zero_grad();
    dp.forward(randn({9, 5})).sum().backward();
    opt.step();
  }
  EXPECT_EQ(dp.sync_stats().bytes_copied, 0);
}

// The replicas read the module's parameters where they lie: a forward that writes one in place
// would race with the other replicas, so it is an error naming the parameter. (Only the replica on
// cpu:1 writes here, and nothing else reads that parameter, so the test itself does not race.)
struct CountsCallsInAParameter : nn::Cloneable<CountsCallsInAParameter> {
  CountsCallsInAParameter() { reset(); }
  void reset() override {
    fc = register_module("fc", nn::Linear(2, 2));
    calls = register_parameter("calls", zeros({1}), /*requires_grad=*/false);
  }
  Tensor forward(const Tensor& x) {
    if (x.device() == Device("cpu:1")) {
      NoGradGuard g;
      calls.add_(1.0);
    }
    return fc(x);
  }
  nn::Linear fc{nullptr};
  Tensor calls;
};

TEST_F(DataParallel, AForwardThatWritesAParameterInPlaceIsAnErrorNamingIt) {
  nn::DataParallel<CountsCallsInAParameter> dp(std::make_shared<CountsCallsInAParameter>(), first(2));
  const std::string msg = error_of([&] { dp.forward(randn({4, 2})); });
  EXPECT_THAT(msg, HasSubstr("DataParallel: the forward pass wrote parameter 'calls' in place"));
  EXPECT_THAT(msg, HasSubstr("register_buffer"));
}

struct Boom : nn::Cloneable<Boom> {
  Boom() { reset(); }
  void reset() override { fc = register_module("fc", nn::Linear(2, 2)); }
  Tensor forward(const Tensor& x) {
    COHORT_CHECK(x.device() != Device("cpu:1"), "Boom: cpu:1 is cursed");
    return fc(x);
  }
  nn::Linear fc{nullptr};
};

TEST_F(DataParallel, AReplicaErrorNamesTheReplica) {
  nn::DataParallel<Boom> dp(std::make_shared<Boom>(), first(3));
  std::string msg = error_of([&] { dp.forward(randn({6, 2})); });
  EXPECT_THAT(msg, HasSubstr("1 of 3 replicas failed"));
  EXPECT_THAT(msg, HasSubstr("replica 1 on cpu:1 (inputs [2, 2]): Boom: cpu:1 is cursed"));
}

// A small conv net; with batch norm, training differs from one device by design (each replica
// normalises with its own chunk's statistics), so the training test runs it without.
struct ConvNet : nn::Cloneable<ConvNet> {
  explicit ConvNet(bool with_bn = true, std::optional<double> momentum = 0.1) : with_bn(with_bn), momentum(momentum) { reset(); }
  void reset() override {
    conv = register_module("conv", nn::Conv2d(nn::Conv2dOptions(2, 4, 3).padding(1)));
    if (with_bn) bn = register_module("bn", nn::BatchNorm2d(nn::BatchNorm2dOptions(4).momentum(momentum)));
    fc = register_module("fc", nn::Linear(4 * 6 * 6, 3));
  }
  Tensor forward(const Tensor& x) {
    Tensor h = conv(x);
    if (with_bn) h = bn(h);
    return fc(relu(h).view({x.size(0), -1}));
  }
  bool with_bn;
  std::optional<double> momentum;
  nn::Conv2d conv{nullptr};
  nn::BatchNorm2d bn{nullptr};
  nn::Linear fc{nullptr};
};

// N SGD steps on random data with `devices` devices (1 = the plain module).
template <class Net>
std::pair<float, nn::StateDict> train(std::shared_ptr<Net> net, int devices, Shape input, int64_t classes) {
  nn::DataParallel<Net> dp(net, [&] { std::vector<Device> d; for (int i = 0; i < devices; ++i) d.emplace_back(kCPU, i); return d; }());
  optim::SGD opt(dp.parameters(), optim::SGDOptions(0.05).momentum(0.9));
  manual_seed(11);
  float loss_value = 0;
  for (int step = 0; step < 4; ++step) {
    Tensor x = randn(input), y = randint(0, classes, {input[0]});
    opt.zero_grad();
    Tensor loss = nn::functional::cross_entropy(devices == 1 ? net->forward(x) : dp.forward(x), y);
    loss.backward();
    opt.step();
    loss_value = loss.item<float>();
  }
  return {loss_value, net->state_dict()};
}

template <class Make>
void expect_same_training(Make make, Shape input, int64_t classes) {
  auto [loss1, state1] = train(make(), 1, input, classes);
  for (int devices : {2, 3}) {
    auto [loss, state] = train(make(), devices, input, classes);
    EXPECT_NEAR(loss, loss1, 1e-4) << devices << " devices";
    for (const auto& item : state1)
      EXPECT_TRUE(allclose(state[item.key()].to(kFloat64), item.value().to(kFloat64), 1e-4, 1e-5))
          << item.key() << " on " << devices << " devices";
  }
}

TEST_F(DataParallel, TrainingEqualsOneDeviceConvNet) {
  expect_same_training([] { manual_seed(5); return std::make_shared<ConvNet>(false); }, {10, 2, 6, 6}, 3);
}

// The default buffer rule: running statistics of the whole batch, as one device computes them,
// with uneven chunks (10 on 3 -> 4, 3, 3), for momentum and for the cumulative average.
TEST_F(DataParallel, BatchNormRunningStatisticsEqualOneDevice) {
  for (std::optional<double> momentum : {std::optional<double>(0.1), std::optional<double>()}) {
    manual_seed(5);
    auto net = std::make_shared<ConvNet>(true, momentum);
    auto single = std::dynamic_pointer_cast<ConvNet>(net->clone());
    nn::DataParallel<ConvNet> dp(net, first(3));
    for (int step = 0; step < 3; ++step) {
      Tensor x = randn({10, 2, 6, 6}) * (step + 1) + step;
      dp.forward(x);
      single->forward(x);
    }
    EXPECT_TRUE(allclose(net->bn->running_mean, single->bn->running_mean, 1e-5, 1e-6));
    EXPECT_TRUE(allclose(net->bn->running_var, single->bn->running_var, 1e-5, 1e-6));
    EXPECT_EQ(net->bn->num_batches_tracked.item<int64_t>(), 3);
    // Evaluation uses them: replicas got the merged values.
    net->eval();
    single->eval();
    Tensor x = randn({6, 2, 6, 6});
    EXPECT_TRUE(allclose(dp.forward(x), single->forward(x), 1e-4, 1e-5));
  }
}

// A layer called as bn->forward(x) (no holder, so no hooks) records its statistics too: the
// between-chunk part of the variance is there (10 on 3 devices, chunks of different means).
struct DirectBn : nn::Cloneable<DirectBn> {
  DirectBn() { reset(); }
  void reset() override { bn = register_module("bn", nn::BatchNorm1d(4)); }
  Tensor forward(const Tensor& x) { return bn->forward(x); }
  nn::BatchNorm1d bn{nullptr};
};

TEST_F(DataParallel, BatchNormCalledDirectlyKeepsExactRunningStatistics) {
  manual_seed(5);
  auto net = std::make_shared<DirectBn>();
  auto single = std::dynamic_pointer_cast<DirectBn>(net->clone());
  nn::DataParallel<DirectBn> dp(net, first(3));
  Tensor x = randn({10, 4}) + arange(10).to(kFloat32).unsqueeze(1);  // each chunk its own mean
  dp.forward(x);
  single->forward(x);
  EXPECT_TRUE(allclose(net->bn->running_mean, single->bn->running_mean, 1e-5, 1e-6));
  EXPECT_TRUE(allclose(net->bn->running_var, single->bn->running_var, 1e-5, 1e-6))
      << net->bn->running_var << single->bn->running_var;
}

TEST_F(DataParallel, TrainingEqualsOneDeviceLenet) {
  expect_same_training([] { manual_seed(5); return models::create("lenet"); }, {7, 3, 32, 32}, 10);
}

// Dropout masks do not depend on the split (Note [Replica RNG]), so training with dropout on 2 and
// 3 devices equals one device too.
struct DropoutNet : nn::Cloneable<DropoutNet> {
  DropoutNet() { reset(); }
  void reset() override {
    fc1 = register_module("fc1", nn::Linear(8, 16));
    drop = register_module("drop", nn::Dropout(0.5));
    fc2 = register_module("fc2", nn::Linear(16, 3));
  }
  Tensor forward(const Tensor& x) { return fc2(drop(relu(fc1(x)))); }
  nn::Linear fc1{nullptr}, fc2{nullptr};
  nn::Dropout drop{nullptr};
};

TEST_F(DataParallel, TrainingWithDropoutEqualsOneDevice) {
  expect_same_training([] { manual_seed(5); return std::make_shared<DropoutNet>(); }, {10, 8}, 3);
}

// Channel dropout draws one mask entry per (sample, channel): a replica's samples draw theirs as in
// the whole batch.
struct Dropout2dNet : nn::Cloneable<Dropout2dNet> {
  Dropout2dNet() { reset(); }
  void reset() override {
    conv = register_module("conv", nn::Conv2d(2, 4, 3));
    drop = register_module("drop", nn::Dropout2d(0.5));
    fc = register_module("fc", nn::Linear(4 * 4 * 4, 3));
  }
  Tensor forward(const Tensor& x) { return fc(drop(relu(conv(x))).flatten(1)); }
  nn::Conv2d conv{nullptr};
  nn::Dropout2d drop{nullptr};
  nn::Linear fc{nullptr};
};

TEST_F(DataParallel, TrainingWithDropout2dEqualsOneDevice) {
  expect_same_training([] { manual_seed(5); return std::make_shared<Dropout2dNet>(); }, {10, 2, 6, 6}, 3);
}

TEST_F(DataParallel, FirstReplicaBufferRuleKeepsDeviceZerosStatistics) {
  manual_seed(5);
  auto net = std::make_shared<ConvNet>();
  auto copy = std::dynamic_pointer_cast<ConvNet>(net->clone());
  Tensor x = randn({10, 2, 6, 6});
  nn::DataParallel<ConvNet> dp(net, first(2), parallel::DataParallelOptions().buffers(parallel::BufferRule::kFirstReplica));
  dp.forward(x);
  copy->forward(x.narrow(0, 0, 5));  // what replica 0 saw
  EXPECT_TRUE(allclose(net->bn->running_mean, copy->bn->running_mean, 1e-5, 1e-6));
  EXPECT_TRUE(allclose(net->bn->running_var, copy->bn->running_var, 1e-5, 1e-6));
  EXPECT_EQ(net->bn->num_batches_tracked.item<int64_t>(), 1);
}

// Any arguments scatter takes, a tuple out; the functional form builds replicas for one call.
struct Mixed : nn::Cloneable<Mixed> {
  Mixed() { reset(); }
  void reset() override { fc = register_module("fc", nn::Linear(3, 3)); }
  std::tuple<Tensor, Tensor> forward(const Tensor& x, const Tensor& bias, const std::vector<std::string>& names) {
    COHORT_CHECK(static_cast<int64_t>(names.size()) == x.size(0), "Mixed: names and samples differ");
    return {fc(x) + bias, (x * x).sum()};
  }
  nn::Linear fc{nullptr};
};

TEST_F(DataParallel, FunctionalFormWithBroadcastSplitAndTupleOutput) {
  auto net = std::make_shared<Mixed>();
  Tensor x = randn({5, 3}), bias = randn({1, 3}).requires_grad_();
  std::vector<std::string> names{"a", "b", "c", "d", "e"};
  auto [y, s] = parallel::data_parallel(net, first(2), Device("cpu:1"), {}, x, parallel::Broadcast(bias),
                                        parallel::Split(names));
  EXPECT_EQ(y.device(), Device("cpu:1"));
  EXPECT_TRUE(allclose(y.to("cpu:0"), net->fc(x) + bias, 1e-5, 1e-6));
  // 0-d outputs: the replicas' values (5 on 2 -> 3, 2) averaged with their sample counts as weights.
  Tensor s0 = (x.narrow(0, 0, 3) * x.narrow(0, 0, 3)).sum(), s1 = (x.narrow(0, 3, 2) * x.narrow(0, 3, 2)).sum();
  EXPECT_NEAR(s.item<float>(), ((s0 * 3 + s1 * 2) / 5).item<float>(), 1e-4);
  y.sum().backward();
  EXPECT_TRUE(allclose(bias.grad(), full({1, 3}, 5.0)));  // every replica's share summed
}

}  // namespace
