// utils::checkpoint_sequential inside a DataParallel replica: forward_backward differentiates each
// replica down to its own parameters, on the replica's thread; the checkpoint's recompute must draw
// the replica's dropout masks again and hand the parameters' gradients to that pass.
#include <gtest/gtest.h>

#include <tuple>

#include <cohort/cohort.h>
#include <cohort/parallel/data_parallel.h>

#include "support/devices.h"

using namespace cohort;

namespace {

class CheckpointDataParallel : public cohort::testing::WithDevices<2> {};

enum class Mode { kNone, kSequential, kModule };

struct Net : nn::Cloneable<Net> {
  explicit Net(Mode mode) : mode(mode) { reset(); }
  void reset() override {
    seq = register_module("seq", nn::Sequential(nn::Linear(6, 16), nn::ReLU(), nn::Dropout(0.4), nn::Linear(16, 16),
                                                nn::Tanh(), nn::Dropout(0.2), nn::Linear(16, 3)));
  }
  Tensor forward(const Tensor& x) {
    if (mode == Mode::kSequential) return utils::checkpoint_sequential(seq, 3, x);
    if (mode == Mode::kModule) return utils::checkpoint(seq, x);
    return seq->forward(x);
  }
  Mode mode;
  nn::Sequential seq{nullptr};
};

// forward_backward, or forward() then backward() (whose nodes run on the devices' threads, outside
// the replicas' forward: the recompute must bring back each replica's BatchSlice).
std::vector<Tensor> step_gradients(Mode mode, int devices, bool one_job) {
  manual_seed(3);
  auto net = std::make_shared<Net>(mode);
  nn::DataParallel<Net> dp(net, cohort::testing::first_devices(devices));
  manual_seed(4);
  Tensor x = randn({10, 6}), y = randint(0, 3, {10});
  manual_seed(5);
  Tensor loss, logits;
  if (one_job) {
    std::tie(loss, logits) = dp.forward_backward(
        [](Net& m, const Tensor& xs, const Tensor& ys) {
          Tensor l = m.forward(xs);
          return std::make_tuple(nn::functional::cross_entropy(l, ys), l.detach());
        },
        x, y);
  } else {
    logits = dp.forward(x);
    loss = nn::functional::cross_entropy(logits, y);
    loss.backward();
    logits = logits.detach();
  }
  std::vector<Tensor> grads{loss.detach().reshape({1}), logits};
  for (const Tensor& p : net->parameters()) grads.push_back(p.grad().clone());
  return grads;
}

TEST_F(CheckpointDataParallel, GivesTheUncheckedGradients) {
  for (bool one_job : {true, false})
    for (int devices : {1, 2})
      for (Mode mode : {Mode::kSequential, Mode::kModule}) {
        std::vector<Tensor> want = step_gradients(Mode::kNone, devices, one_job);
        std::vector<Tensor> got = step_gradients(mode, devices, one_job);
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i)
          EXPECT_TRUE(equal(got[i], want[i]))
              << devices << " devices, forward_backward " << one_job << ", checkpoint(module) "
              << (mode == Mode::kModule) << ": tensor " << i << " (0 loss, 1 logits, then the parameters' gradients)";
      }
}

}  // namespace
