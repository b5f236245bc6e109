// GradientAccumulator: k micro-batches equal one step on their concatenation (plain module and
// DataParallel, equal and uneven micro-batches), and the window's errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cohort/cohort.h>
#include <cohort/optim/accumulate.h>
#include <cohort/parallel/data_parallel.h>

#include "support/devices.h"
#include "support/error_of.h"

using namespace cohort;
using cohort::testing::error_of;
using ::testing::HasSubstr;
namespace F = cohort::nn::functional;

namespace {

struct Mlp : nn::Cloneable<Mlp> {
  Mlp() { reset(); }
  void reset() override {
    fc1 = register_module("fc1", nn::Linear(6, 8));
    fc2 = register_module("fc2", nn::Linear(8, 3));
  }
  Tensor forward(const Tensor& x) { return fc2(F::relu(fc1(x))); }
  nn::Linear fc1{nullptr}, fc2{nullptr};
};

constexpr int kSteps = 3;
constexpr int64_t kBatch = 12;

class Accumulator : public cohort::testing::WithDevices<2> {
 protected:
  void SetUp() override {
    WithDevices::SetUp();
    manual_seed(7);
    for (int s = 0; s < kSteps; ++s) {
      inputs_.push_back(randn({kBatch, 6}));
      labels_.push_back(randint(0, 3, {kBatch}));
    }
  }
  static std::shared_ptr<Mlp> fresh() {
    manual_seed(3);
    return std::make_shared<Mlp>();
  }
  static optim::SGDOptions sgd() { return optim::SGDOptions(0.1).momentum(0.9); }

  // kSteps SGD steps, each on the whole batch: the reference.
  nn::StateDict train_whole() const {
    auto net = fresh();
    optim::SGD opt(net->parameters(), sgd());
    for (int s = 0; s < kSteps; ++s) {
      opt.zero_grad();
      F::cross_entropy(net->forward(inputs_[s]), labels_[s]).backward();
      opt.step();
    }
    return net->state_dict();
  }

  // kSteps windows, each batch cut into micro-batches of `sizes`; by_samples picks backward's form.
  nn::StateDict train_accumulated(const std::vector<int64_t>& sizes, bool by_samples, int devices) const {
    auto net = fresh();
    nn::DataParallel<Mlp> dp(net, cohort::testing::first_devices(devices));
    optim::SGD opt(dp.parameters(), sgd());
    optim::GradientAccumulator acc(opt, static_cast<int64_t>(sizes.size()));
    acc.zero_grad();
    for (int s = 0; s < kSteps; ++s) {
      int64_t start = 0;
      for (int64_t n : sizes) {
        EXPECT_FALSE(acc.ready());
        Tensor x = inputs_[s].narrow(0, start, n), y = labels_[s].narrow(0, start, n);
        Tensor loss = F::cross_entropy(devices == 1 ? net->forward(x) : dp(x), y);
        by_samples ? acc.backward(loss, n) : acc.backward(loss);
        start += n;
      }
      EXPECT_TRUE(acc.ready());
      EXPECT_EQ(acc.samples(), by_samples ? kBatch : 0);
      acc.step();
      EXPECT_EQ(acc.done(), 0);
    }
    return net->state_dict();
  }

  static void expect_same(nn::StateDict got, const nn::StateDict& want, const char* what) {
    for (const auto& item : want)
      EXPECT_TRUE(allclose(got[item.key()], item.value(), 1e-4, 1e-6)) << item.key() << ", " << what;
  }

  std::vector<Tensor> inputs_, labels_;
};

TEST_F(Accumulator, EqualMicroBatchesEqualOneStep) {
  nn::StateDict whole = train_whole();
  expect_same(train_accumulated({4, 4, 4}, false, 1), whole, "3 x 4, loss / k");
  expect_same(train_accumulated({6, 6}, false, 1), whole, "2 x 6, loss / k");
  expect_same(train_accumulated({12}, false, 1), whole, "1 x 12");
}

TEST_F(Accumulator, UnevenMicroBatchesEqualOneStepBySamples) {
  nn::StateDict whole = train_whole();
  expect_same(train_accumulated({5, 4, 3}, true, 1), whole, "5, 4, 3 by samples");
  expect_same(train_accumulated({11, 1}, true, 1), whole, "11, 1 by samples");
  // The mean form weighs a micro-batch of 1 like one of 11: not the whole batch's step.
  nn::StateDict skewed = train_accumulated({11, 1}, false, 1);
  EXPECT_FALSE(allclose(skewed["fc2.weight"], whole["fc2.weight"], 1e-4, 1e-6));
}

TEST_F(Accumulator, WorksWithDataParallel) {
  nn::StateDict whole = train_whole();
  expect_same(train_accumulated({4, 4, 4}, false, 2), whole, "DataParallel on 2 devices, loss / k");
  expect_same(train_accumulated({5, 4, 3}, true, 2), whole, "DataParallel on 2 devices, by samples");
}

TEST_F(Accumulator, StepInMidWindowIsRefusedAndChangesNothing) {
  auto net = fresh();
  optim::SGD opt(net->parameters(), sgd());
  optim::GradientAccumulator acc(opt, 3);
  EXPECT_THAT(error_of([&] { acc.step(); }),
              HasSubstr("GradientAccumulator::step: only 0 of 3 micro-batches of the window done"));
  for (int i = 0; i < 2; ++i) acc.backward(F::cross_entropy(net->forward(inputs_[0]), labels_[0]));
  Tensor before = net->fc1->weight.clone(), grad = net->fc1->weight.grad().clone();
  std::string message = error_of([&] { acc.step(); });
  EXPECT_THAT(message, HasSubstr("GradientAccumulator::step: only 2 of 3 micro-batches of the window done; "));
  EXPECT_THAT(message, HasSubstr("hint: call backward() for the remaining 1, or zero_grad() to drop the window"));
  EXPECT_TRUE(net->fc1->weight.equal(before));
  EXPECT_TRUE(net->fc1->weight.grad().equal(grad));
  EXPECT_EQ(acc.done(), 2);
  EXPECT_FALSE(acc.ready());
}

TEST_F(Accumulator, WindowErrors) {
  auto net = fresh();
  optim::SGD opt(net->parameters(), sgd());
  EXPECT_THAT(error_of([&] { optim::GradientAccumulator(opt, 0); }),
              HasSubstr("GradientAccumulator: expected at least 1 micro-batch per step, got 0"));
  optim::GradientAccumulator acc(opt, 2);
  Tensor loss = F::cross_entropy(net->forward(inputs_[0]), labels_[0]);
  EXPECT_THAT(error_of([&] { acc.backward(net->forward(inputs_[0])); }),
              HasSubstr("GradientAccumulator::backward: expected a 0-d loss, got [12, 3]; hint: reduce it first"));
  EXPECT_THAT(error_of([&] { acc.backward(loss, 0); }),
              HasSubstr("expected the micro-batch's sample count (at least 1), got 0"));
  acc.backward(loss, 12);
  EXPECT_THAT(error_of([&] { acc.backward(F::cross_entropy(net->forward(inputs_[1]), labels_[1])); }),
              HasSubstr("this window mixes backward(loss) and backward(loss, samples) after 1 of 2 micro-batches"));
  acc.backward(F::cross_entropy(net->forward(inputs_[1]), labels_[1]), 12);
  EXPECT_TRUE(acc.ready());
  EXPECT_THAT(error_of([&] { acc.backward(F::cross_entropy(net->forward(inputs_[2]), labels_[2]), 12); }),
              HasSubstr("GradientAccumulator::backward: the window of 2 micro-batches is already complete; "
                        "hint: call step()"));
}

TEST_F(Accumulator, ZeroGradDropsTheWindow) {
  auto net = fresh();
  optim::SGD opt(net->parameters(), sgd());
  optim::GradientAccumulator acc(opt, 2);
  acc.backward(F::cross_entropy(net->forward(inputs_[0]), labels_[0]), 12);
  ASSERT_TRUE(net->fc1->weight.grad().defined());
  acc.zero_grad();
  EXPECT_EQ(acc.done(), 0);
  EXPECT_EQ(acc.samples(), 0);
  EXPECT_FALSE(net->fc1->weight.grad().defined());
  // A new window may use the other form.
  acc.backward(F::cross_entropy(net->forward(inputs_[0]), labels_[0]));
  acc.backward(F::cross_entropy(net->forward(inputs_[1]), labels_[1]));
  Tensor before = net->fc1->weight.clone();
  acc.step();
  EXPECT_FALSE(net->fc1->weight.equal(before));
  EXPECT_FALSE(net->fc1->weight.grad().defined());  // step() leaves the next window clean
}

}  // namespace
