// DataParallelOptions::sync_batch_norm: with batch norm in training, outputs, gradients and SGD
// training on 2 or 3 devices equal one device (Note [Sync batch norm]); without it they do not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cohort/cohort.h>
#include <cohort/models/model.h>
#include <cohort/parallel/data_parallel.h>

#include "support/devices.h"
#include "support/error_of.h"

using namespace cohort;
namespace F = cohort::nn::functional;

namespace {

// Conv -> BatchNorm2d -> ReLU -> BatchNorm1d (used twice: the rendezvous pairs calls in order) -> Linear.
struct BnNet : nn::Cloneable<BnNet> {
  BnNet() { reset(); }
  void reset() override {
    conv = register_module("conv", nn::Conv2d(nn::Conv2dOptions(2, 4, 3).padding(1)));
    bn = register_module("bn", nn::BatchNorm2d(4));
    bn1d = register_module("bn1d", nn::BatchNorm1d(nn::BatchNorm1dOptions(4 * 5 * 5).track_running_stats(false)));
    fc = register_module("fc", nn::Linear(4 * 5 * 5, 3));
  }
  Tensor forward(const Tensor& x) {
    Tensor h = F::relu(bn(conv(x))).view({x.size(0), -1});
    return fc(bn1d(bn1d(h)));
  }
  nn::Conv2d conv{nullptr};
  nn::BatchNorm2d bn{nullptr};
  nn::BatchNorm1d bn1d{nullptr};
  nn::Linear fc{nullptr};
};

class SyncBatchNorm : public cohort::testing::WithDevices<3> {
 protected:
  static std::shared_ptr<BnNet> fresh() {
    manual_seed(5);
    return std::make_shared<BnNet>();
  }
  static parallel::DataParallelOptions synced() { return parallel::DataParallelOptions().sync_batch_norm(true); }
};

TEST_F(SyncBatchNorm, OutputAndGradientsEqualOneDevice) {
  auto single = fresh();
  manual_seed(9);
  Tensor x = randn({10, 2, 5, 5}) * 2 + 1;
  Tensor y_single = single->forward(x);
  y_single.square().sum().backward();
  for (int devices : {2, 3}) {
    auto net = fresh();
    nn::DataParallel<BnNet> dp(net, first(devices), synced());
    Tensor y = dp(x);
    EXPECT_TRUE(allclose(y, y_single, 1e-4, 1e-5)) << devices << " devices";
    y.square().sum().backward();
    for (const auto& p : single->named_parameters())
      EXPECT_TRUE(allclose(net->named_parameters()[p.key()].grad(), p.value().grad(), 1e-3, 1e-4))
          << p.key() << " on " << devices << " devices";
    EXPECT_TRUE(allclose(net->bn->running_mean, single->bn->running_mean, 1e-5, 1e-6));
    EXPECT_TRUE(allclose(net->bn->running_var, single->bn->running_var, 1e-5, 1e-6));
  }
  // Without the option each replica normalises its own chunk: the output differs.
  auto net = fresh();
  nn::DataParallel<BnNet> dp(net, first(2));
  EXPECT_FALSE(allclose(dp(x), y_single, 1e-4, 1e-5));
}

TEST_F(SyncBatchNorm, TrainingEqualsOneDevice) {
  auto train = [](int devices) {
    auto net = fresh();
    nn::DataParallel<BnNet> dp(net, first(devices), synced());
    optim::SGD opt(net->parameters(), optim::SGDOptions(0.05).momentum(0.9));
    manual_seed(11);
    for (int step = 0; step < 3; ++step) {
      Tensor x = randn({9, 2, 5, 5}), y = randint(0, 3, {9});
      opt.zero_grad();
      F::cross_entropy(devices == 1 ? net->forward(x) : dp(x), y).backward();
      opt.step();
    }
    return net->state_dict();
  };
  nn::StateDict one = train(1);
  for (int devices : {2, 3}) {
    nn::StateDict many = train(devices);
    for (const auto& item : one)
      EXPECT_TRUE(allclose(many[item.key()].to(kFloat64), item.value().to(kFloat64), 1e-4, 1e-5))
          << item.key() << " on " << devices << " devices";
  }
}

TEST_F(SyncBatchNorm, EvaluationAndResNetMatchOneDevice) {
  manual_seed(5);
  auto net = models::create("resnet18", models::ModelOptions().num_classes(4).image_size(8));
  auto single = net->clone_model();
  nn::DataParallel<models::Model> dp(net, first(2), synced());
  manual_seed(2);
  Tensor x = randn({6, 3, 8, 8});
  EXPECT_TRUE(allclose(dp(x), single->forward(x), 1e-3, 1e-4));
  net->eval();
  single->eval();
  EXPECT_TRUE(allclose(dp(x), single->forward(x), 1e-3, 1e-4));  // running statistics, no rendezvous
}

// Batch 3 on 3 devices gives each replica one sample: its own chunk has no batch statistics, the
// whole batch does. Batch 5 splits 2, 2, 1.
TEST_F(SyncBatchNorm, OneSampleChunkEqualsOneDevice) {
  for (int64_t batch : {3, 5}) {
    auto single = fresh();
    manual_seed(9);
    Tensor x = randn({batch, 2, 5, 5});
    Tensor y_single = single->forward(x);
    y_single.square().sum().backward();
    auto net = fresh();
    nn::DataParallel<BnNet> dp(net, first(3), synced());
    Tensor y = dp(x);
    EXPECT_TRUE(allclose(y, y_single, 1e-4, 1e-5)) << "batch " << batch;
    y.square().sum().backward();
    for (const auto& p : single->named_parameters())
      EXPECT_TRUE(allclose(net->named_parameters()[p.key()].grad(), p.value().grad(), 1e-3, 1e-4))
          << p.key() << ", batch " << batch;
    EXPECT_TRUE(allclose(net->bn->running_mean, single->bn->running_mean, 1e-5, 1e-6)) << "batch " << batch;
    EXPECT_TRUE(allclose(net->bn->running_var, single->bn->running_var, 1e-5, 1e-6)) << "batch " << batch;
    EXPECT_EQ(net->bn->num_batches_tracked.item<int64_t>(), 1);
  }
}

// A replica that throws before its batch-norm layer, or returns without calling it: the replicas
// waiting for it at the rendezvous fail at once, saying which replica and why.
struct SkippingNet : nn::Cloneable<SkippingNet> {
  explicit SkippingNet(bool throws) : throws(throws) { reset(); }
  void reset() override { bn = register_module("bn", nn::BatchNorm1d(4)); }
  Tensor forward(const Tensor& x) {
    if (x.device() != Device("cpu:2")) return bn(x);
    if (throws) throw Error("SkippingNet: this replica fails");
    return x;
  }
  bool throws;
  nn::BatchNorm1d bn{nullptr};
};

TEST_F(SyncBatchNorm, AReplicaThatNeverReachesTheLayerFailsTheOthersAtOnce) {
  for (bool throws : {true, false}) {
    nn::DataParallel<SkippingNet> dp(std::make_shared<SkippingNet>(throws), first(3), synced());
    std::string message = cohort::testing::error_of([&] { dp(randn({6, 4})); });
    EXPECT_THAT(message, ::testing::HasSubstr("replica 0 on cpu:0 reached call 1 of this layer, but replica 2"));
    EXPECT_THAT(message, ::testing::HasSubstr(throws ? "failed before reaching it (see its error)"
                                                     : "returned after calling it 0 time(s)"));
    if (throws) EXPECT_THAT(message, ::testing::HasSubstr("SkippingNet: this replica fails"));
    // The wrapper stays usable: in evaluation nothing waits.
    dp.eval();
    if (!throws) EXPECT_EQ(dp(randn({6, 4})).size(0), 6);
  }
}

// Called as bn->forward(x) rather than through the holder, the layer still syncs.
struct DirectCallNet : nn::Cloneable<DirectCallNet> {
  DirectCallNet() { reset(); }
  void reset() override { bn = register_module("bn", nn::BatchNorm1d(3)); }
  Tensor forward(const Tensor& x) { return bn->forward(x); }
  nn::BatchNorm1d bn{nullptr};
};

TEST_F(SyncBatchNorm, ADirectForwardCallSyncsToo) {
  manual_seed(3);
  auto single = std::make_shared<DirectCallNet>();
  auto net = std::make_shared<DirectCallNet>();
  Tensor x = randn({4, 3}) * 3 + 2;
  nn::DataParallel<DirectCallNet> dp(net, first(2), synced());
  EXPECT_TRUE(allclose(dp(x), single->forward(x), 1e-4, 1e-5));
  EXPECT_TRUE(allclose(net->bn->running_var, single->bn->running_var, 1e-5, 1e-6));
}

}  // namespace
