// utils::checkpoint_sequential inside a DataParallel replica, and under DistributedDataParallel: forward_backward differentiates each
// replica down to its own parameters, on the replica's thread; the checkpoint's recompute must draw
// the replica's dropout masks again and hand the parameters' gradients to that pass.
#include <gtest/gtest.h>

#include <tuple>

#include <cohort/cohort.h>
#include <cohort/distributed/ddp.h>
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

// DistributedDataParallel's reducer marks each parameter ready from its post-accumulate hook and
// finishes when the backward pass ends: with a checkpoint, each hook runs once, in that pass (a second
// call would be the error "got its gradient twice"), for two iterations running.
TEST_F(CheckpointDataParallel, DistributedDataParallelHooksRunOncePerParameter) {
  auto group = std::make_shared<distributed::LocalProcessGroup>();
  manual_seed(6);
  auto net = std::make_shared<Net>(Mode::kSequential);
  auto plain = std::make_shared<Net>(Mode::kNone);
  plain->load_state_dict(net->state_dict());
  distributed::DistributedDataParallel<Net> ddp(net, group,
                                                distributed::DistributedDataParallelOptions().bucket_cap_mb(1e-6));
  for (int step = 0; step < 2; ++step) {
    Tensor x = randn({4, 6});
    manual_seed(7 + step);
    ddp(x).square().sum().backward();
    manual_seed(7 + step);
    plain->forward(x).square().sum().backward();
    for (const auto& p : net->named_parameters())
      EXPECT_TRUE(equal(p.value().grad(), plain->named_parameters()[p.key()].grad())) << p.key() << ", step " << step;
  }
}

}  // namespace
