// DataParallelOptions::sync_batch_norm: with batch norm in training, outputs, gradients and SGD
// training on 2 or 3 devices equal one device (Note [Sync batch norm]); without it they do not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cohort/cohort.h>
#include <cohort/models/model.h>
#include <cohort/parallel/data_parallel.h>

#include "support/devices.h"

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

}  // namespace
