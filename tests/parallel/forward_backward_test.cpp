// nn::DataParallel::forward_backward: each replica's forward, loss and backward as one job on its
// own thread, with the gradients, loss and results of forward() then backward().
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <cohort/cohort.h>
#include <cohort/models/model.h>
#include <cohort/parallel/data_parallel.h>

#include "support/devices.h"
#include "support/error_of.h"

using namespace cohort;
using cohort::testing::error_of;
using ::testing::HasSubstr;

namespace {

class ForwardBackward : public cohort::testing::WithDevices<4> {
 protected:
  void SetUp() override {
    WithDevices::SetUp();
    manual_seed(0);
  }
};

struct Mlp : nn::Cloneable<Mlp> {
  explicit Mlp(bool with_bn = false) : with_bn(with_bn) { reset(); }
  void reset() override {
    fc1 = register_module("fc1", nn::Linear(6, 8));
    if (with_bn) bn = register_module("bn", nn::BatchNorm1d(8));
    fc2 = register_module("fc2", nn::Linear(8, 3));
  }
  Tensor forward(const Tensor& x) {
    Tensor h = fc1(x);
    if (with_bn) h = bn(h);
    return fc2(relu(h));
  }
  bool with_bn;
  nn::Linear fc1{nullptr}, fc2{nullptr};
  nn::BatchNorm1d bn{nullptr};
};

template <class Net>
auto cross_entropy_step() {
  return [](Net& net, const Tensor& x, const Tensor& y) {
    Tensor logits = net.forward(x);
    return std::make_tuple(nn::functional::cross_entropy(logits, y), logits.detach());
  };
}

std::map<std::string, Tensor> grads_of(const nn::Module& m) {
  std::map<std::string, Tensor> out;
  for (const auto& p : m.named_parameters()) out[p.key()] = p.value().grad().defined() ? p.value().grad().clone() : Tensor();
  return out;
}

void expect_same_grads(const std::map<std::string, Tensor>& a, const std::map<std::string, Tensor>& b,
                       const std::string& what) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, g] : a) {
    ASSERT_EQ(g.defined(), b.at(name).defined()) << name << " " << what;
    if (g.defined()) EXPECT_TRUE(allclose(g, b.at(name), 1e-5, 1e-6)) << name << " " << what;
  }
}

// The same numbers as forward() and backward() through the wrapper, with even and uneven chunks,
// the loss reduced by the sample-weighted mean or by the sum, and batch norm (each replica
// normalising its chunk, as forward does without sync batch norm).
TEST_F(ForwardBackward, GradientsLossAndOutputsEqualForwardThenBackward) {
  for (bool with_bn : {false, true})
    for (Reduction scalars : {kMean, kSum})
      for (int devices : {2, 3}) {
        const std::string what = ::cohort::detail::str(devices, " devices, bn ", with_bn, ", sum ", scalars == kSum);
        manual_seed(3);
        auto net = std::make_shared<Mlp>(with_bn);
        auto options = parallel::DataParallelOptions().scalars(scalars);
        nn::DataParallel<Mlp> dp(net, first(devices), options);
        Tensor x = randn({10, 6}), y = randint(0, 3, {10});
        auto loss_fn = [&](const Tensor& logits, const Tensor& target) {
          return nn::functional::cross_entropy(
              logits, target, nn::functional::CrossEntropyOptions().reduction(scalars == kSum ? kSum : kMean));
        };
        // Reference: the gathered output, one loss over the batch.
        Tensor out = dp.forward(x);
        Tensor loss = loss_fn(out, y);
        loss.backward();
        auto expected = grads_of(*net);
        const Tensor expected_mean = net->with_bn ? net->bn->running_mean.clone() : Tensor();
        if (with_bn) {  // the reference's update of the running statistics, undone
          net->bn->running_mean.fill_(0);
          net->bn->running_var.fill_(1);
          net->bn->num_batches_tracked.fill_(0);
        }
        for (auto& p : net->parameters()) p.mutable_grad() = Tensor();

        auto [step_loss, logits] = dp.forward_backward(
            [&](Mlp& m, const Tensor& xs, const Tensor& ys) {
              Tensor l = m.forward(xs);
              return std::make_tuple(loss_fn(l, ys), l.detach());
            },
            x, y);
        expect_same_grads(grads_of(*net), expected, what);
        EXPECT_NEAR(step_loss.item<double>(), loss.item<double>(), 1e-5) << what;
        EXPECT_FALSE(step_loss.requires_grad());
        EXPECT_TRUE(allclose(logits, out.detach(), 1e-5, 1e-6)) << what;
        if (with_bn) EXPECT_TRUE(allclose(net->bn->running_mean, expected_mean, 1e-5, 1e-6)) << what;
      }
}

// SGD with momentum over several steps: the same weights as one device.
TEST_F(ForwardBackward, TrainingEqualsOneDevice) {
  auto train = [](int devices) {
    manual_seed(5);
    auto net = models::create("lenet");
    nn::DataParallel<models::Model> dp(net, first(devices));
    optim::SGD opt(net->parameters(), optim::SGDOptions(0.05).momentum(0.9));
    manual_seed(11);
    double last = 0;
    for (int step = 0; step < 4; ++step) {
      Tensor x = randn({7, 3, 32, 32}), y = randint(0, 10, {7});
      opt.zero_grad();
      if (devices == 1) {
        Tensor loss = nn::functional::cross_entropy(net->forward(x), y);
        loss.backward();
        last = loss.item<double>();
      } else {
        last = dp.forward_backward([](models::Model& m, const Tensor& xs, const Tensor& ys) {
                   return nn::functional::cross_entropy(m.forward(xs), ys);
                 }, x, y).item<double>();
      }
      opt.step();
    }
    return std::make_pair(last, net->state_dict());
  };
  auto [loss1, state1] = train(1);
  for (int devices : {2, 3}) {
    auto [loss, state] = train(devices);
    EXPECT_NEAR(loss, loss1, 1e-4) << devices << " devices";
    for (const auto& item : state1)
      EXPECT_TRUE(allclose(state[item.key()], item.value(), 1e-4, 1e-5)) << item.key() << " on " << devices;
  }
}

// Each replica's backward runs on the thread that ran its forward, without waiting for the other
// replicas' forwards: one hand-off each way per step. Replica 1 holds its forward until replica 0's
// backward has run, which could never happen if backward started only after every forward.
TEST_F(ForwardBackward, EachReplicaDifferentiatesOnItsOwnThread) {
  auto net = std::make_shared<Mlp>();
  nn::DataParallel<Mlp> dp(net, first(2));
  std::mutex m;
  std::condition_variable cv;
  std::map<int64_t, std::thread::id> forward_thread, backward_thread;  // by chunk size
  bool waited = false;
  dp.forward_backward(
      [&](Mlp& replica, const Tensor& x) {
        const int64_t n = x.size(0);
        if (n == 2) {
          std::unique_lock<std::mutex> l(m);
          waited = cv.wait_for(l, std::chrono::seconds(10), [&] { return backward_thread.count(3) > 0; });
        }
        Tensor h = replica.forward(x);
        {
          std::lock_guard<std::mutex> l(m);
          forward_thread[n] = std::this_thread::get_id();
        }
        h.register_hook([&, n](const Tensor&) {
          std::lock_guard<std::mutex> l(m);
          backward_thread[n] = std::this_thread::get_id();
          cv.notify_all();
        });
        return h.sum();
      },
      randn({5, 6}));  // chunks of 3 and 2
  EXPECT_TRUE(waited) << "replica 0's backward did not run while replica 1 was still in its forward";
  ASSERT_EQ(forward_thread.size(), 2u);
  ASSERT_EQ(backward_thread.size(), 2u);
  EXPECT_NE(forward_thread[3], forward_thread[2]);
  EXPECT_EQ(backward_thread[3], forward_thread[3]);
  EXPECT_EQ(backward_thread[2], forward_thread[2]);
  EXPECT_EQ(forward_thread[3], std::this_thread::get_id());  // replica 0: the caller's thread
}

// The master's tensor hooks and post-accumulate hooks (what DistributedDataParallel uses) run once
// per step, on the summed gradient; a frozen parameter and an unused one get no gradient.
TEST_F(ForwardBackward, MasterHooksRunOnceOnTheSummedGradient) {
  auto net = std::make_shared<Mlp>();
  nn::DataParallel<Mlp> dp(net, first(3));
  net->fc1->bias.set_requires_grad(false);
  int pre = 0, post = 0;
  Tensor seen;
  net->fc2->weight.register_hook([&](const Tensor& g) { ++pre; seen = g.clone(); });
  net->fc2->weight.register_post_accumulate_grad_hook([&](const Tensor&) { ++post; });
  Tensor x = randn({7, 6});
  dp.forward_backward([](Mlp& m, const Tensor& xs) { return m.fc2(relu(m.fc1(xs))).pow(2).mean(); }, x);
  EXPECT_EQ(pre, 1);
  EXPECT_EQ(post, 1);
  EXPECT_TRUE(allclose(seen, net->fc2->weight.grad()));
  EXPECT_FALSE(net->fc1->bias.grad().defined());
  Tensor expected = autograd::grad({net->forward(x).pow(2).mean()}, {net->fc2->weight})[0];
  EXPECT_TRUE(allclose(net->fc2->weight.grad(), expected, 1e-5, 1e-6));

  // A step that uses only fc1 leaves fc2's gradient as it was.
  for (auto& p : net->parameters()) p.mutable_grad() = Tensor();
  dp.forward_backward([](Mlp& m, const Tensor& xs) { return m.fc1(xs).sum(); }, x);
  EXPECT_FALSE(net->fc2->weight.grad().defined());
  EXPECT_TRUE(net->fc1->weight.grad().defined());
}

// The cases a replica cannot differentiate alone take the general path, with the same numbers:
// sync batch norm (statistics shared across replicas) and an argument that requires grad.
TEST_F(ForwardBackward, SyncBatchNormAndInputsThatRequireGradTakeTheGeneralPath) {
  manual_seed(3);
  auto net = std::make_shared<Mlp>(true);
  nn::DataParallel<Mlp> dp(net, first(3), parallel::DataParallelOptions().sync_batch_norm(true));
  Tensor x = randn({8, 6}).set_requires_grad(true), y = randint(0, 3, {8});
  Tensor loss = nn::functional::cross_entropy(dp.forward(x), y);
  loss.backward();
  auto expected = grads_of(*net);
  Tensor expected_x = x.grad().clone();
  for (auto& p : net->parameters()) p.mutable_grad() = Tensor();
  x.mutable_grad() = Tensor();
  auto [step_loss, logits] = dp.forward_backward(cross_entropy_step<Mlp>(), x, y);
  expect_same_grads(grads_of(*net), expected, "sync batch norm");
  EXPECT_TRUE(allclose(x.grad(), expected_x, 1e-5, 1e-6));
  EXPECT_NEAR(step_loss.item<double>(), loss.item<double>(), 1e-6);
  EXPECT_FALSE(logits.requires_grad());
}

// Autocast reaches the step as it reaches forward; the backward runs outside it.
TEST_F(ForwardBackward, MixedPrecisionStepEqualsForwardThenBackward) {
  manual_seed(3);
  auto net = std::make_shared<Mlp>();
  nn::DataParallel<Mlp> dp(net, first(2));
  Tensor x = randn({8, 6}), y = randint(0, 3, {8});
  Tensor loss;
  {
    autocast::AutocastGuard bf16(kBFloat16);
    loss = nn::functional::cross_entropy(dp.forward(x), y);
  }
  loss.backward();
  auto expected = grads_of(*net);
  for (auto& p : net->parameters()) p.mutable_grad() = Tensor();
  Tensor step_loss;
  {
    autocast::AutocastGuard bf16(kBFloat16);
    step_loss = std::get<0>(dp.forward_backward(cross_entropy_step<Mlp>(), x, y));
  }
  EXPECT_EQ(net->fc1->weight.grad().dtype(), kFloat32);
  for (const auto& [name, g] : grads_of(*net)) EXPECT_TRUE(allclose(g, expected.at(name), 1e-2, 1e-3)) << name;
  EXPECT_NEAR(step_loss.item<double>(), loss.item<double>(), 1e-3);
}

TEST_F(ForwardBackward, ErrorsNameTheProblemAndTheFix) {
  auto net = std::make_shared<Mlp>();
  nn::DataParallel<Mlp> dp(net, first(2));
  Tensor x = randn({4, 6});
  auto sum = [](Mlp& m, const Tensor& xs) { return m.forward(xs).sum(); };
  {
    NoGradGuard off;
    EXPECT_THAT(error_of([&] { dp.forward_backward(sum, x); }), HasSubstr("grad mode is off"));
  }
  EXPECT_THAT(error_of([&] { dp.forward_backward([](Mlp& m, const Tensor& xs) { return m.forward(xs); }, x); }),
              HasSubstr("expected the loss to be one floating-point value, got float32 of shape [2, 3]"));
  EXPECT_THAT(error_of([&] { dp.forward_backward([](Mlp& m, const Tensor& xs) { return m.forward(xs).sum().detach(); }, x); }),
              HasSubstr("the loss does not require grad"));
  // A tensor outside the module: its gradient would be lost, so it is refused.
  Tensor scale = ones({3}).set_requires_grad(true);
  std::string msg = error_of([&] { dp.forward_backward([&](Mlp& m, const Tensor& xs) { return (m.forward(xs) * scale).sum(); }, x); });
  EXPECT_THAT(msg, HasSubstr("the loss depends on a tensor of shape [3] on cpu:0 that requires grad and is not the module's"));
  EXPECT_THAT(msg, HasSubstr("replica 0 on cpu:0"));
  EXPECT_FALSE(scale.grad().defined());
  // No single loss to differentiate.
  nn::DataParallel<Mlp> stacked(net, first(2), parallel::DataParallelOptions().scalars(parallel::kStack));
  EXPECT_THAT(error_of([&] { stacked.forward_backward(sum, x); }), HasSubstr("kStack"));
  // The module's own hooks would need a call of the whole module.
  net->register_forward_hook([](nn::Module&, const std::vector<Tensor>&, const Tensor&) { return Tensor(); });
  EXPECT_THAT(error_of([&] { dp.forward_backward(sum, x); }), HasSubstr("the module has forward hooks of its own"));
}

}  // namespace
