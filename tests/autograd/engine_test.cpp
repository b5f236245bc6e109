// The backward engine: accumulation, retain_graph, hooks, version counters, anomaly mode, callbacks,
// autograd::grad, concurrent backward of graph parts on different devices, on their executor threads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "support/error_of.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include <cohort/cohort.h>

#include "core/device_executor.h"

using namespace cohort;
using cohort::testing::error_of;
using ::testing::HasSubstr;

namespace {

}  // namespace

TEST(Autograd, BlitzExampleGivesFourAndAHalf) {
  Tensor x = ones({2, 2}, requires_grad());
  Tensor y = x + 2;
  EXPECT_EQ(y.grad_fn()->name(), "AddBackward1");  // libtorch's name for tensor + scalar (Python shows AddBackward0)
  Tensor out = (y * y * 3).mean();
  out.backward();
  EXPECT_TRUE(x.grad().allclose(full({2, 2}, 4.5)));
  EXPECT_TRUE(x.is_leaf());
  EXPECT_FALSE(y.is_leaf());
}

TEST(Autograd, NextFunctionsFormTheGraph) {
  Tensor a = randn({3}, requires_grad());
  Tensor b = randn({3}, requires_grad());
  Tensor c = a * b;
  ASSERT_EQ(c.grad_fn()->next_functions().size(), 2u);
  EXPECT_EQ(c.grad_fn()->next_functions()[0]->name(), "AccumulateGrad");
  Tensor d = c.sum();
  EXPECT_EQ(d.grad_fn()->next_functions()[0].get(), c.grad_fn().get());
}

TEST(Autograd, VectorJacobianProduct) {
  Tensor x = randn({3}, requires_grad());
  Tensor y = x * 2;
  int doublings = 1;
  while (y.norm().item<float>() < 1000) {
    y = y * 2;
    ++doublings;
  }
  Tensor v = tensor({0.1, 1.0, 0.0001}, kFloat32);
  y.backward(v);
  EXPECT_TRUE(x.grad().allclose(v * std::pow(2.0, doublings)));
}

// PyTorch's rule: grad() runs only the nodes on a path to its inputs; a branch that reaches none
// (here b's) is not run, nor are its hooks, and no leaf's .grad changes.
TEST(Autograd, GradRunsOnlyTheNodesOnAPathToItsInputs) {
  Tensor a = randn({3}, requires_grad()), b = randn({3}, requires_grad());
  Tensor ya = a * 2, yb = b * 3;
  bool b_branch_ran = false, a_branch_ran = false;
  yb.register_hook([&](const Tensor&) { b_branch_ran = true; });
  ya.register_hook([&](const Tensor&) { a_branch_ran = true; });
  auto g = autograd::grad({(ya * yb).sum()}, {a});
  EXPECT_TRUE(a_branch_ran);
  EXPECT_FALSE(b_branch_ran);
  EXPECT_TRUE(allclose(g[0], yb.detach() * 2));
  EXPECT_FALSE(a.grad().defined());
  EXPECT_FALSE(b.grad().defined());
  // An input reached through a non-leaf: what lies below it is not needed either.
  bool below_ran = false;
  Tensor mid = a * 1;
  a.register_hook([&](const Tensor&) { below_ran = true; });
  autograd::grad({(mid * mid).sum()}, {mid});
  EXPECT_FALSE(below_ran);
}

TEST(Autograd, GradientsAccumulateAcrossBackwardCalls) {
  Tensor w = ones({2}, requires_grad());
  (w * 3).sum().backward();
  (w * 4).sum().backward();
  EXPECT_TRUE(w.grad().allclose(full({2}, 7.0)));
}

TEST(Autograd, SharedInputSumsItsGradients) {
  Tensor x = tensor({2.0, 3.0}, kFloat64).requires_grad_();
  (x * x).sum().backward();  // both edges of MulBackward0 lead to x
  EXPECT_TRUE(x.grad().allclose(tensor({4.0, 6.0}, kFloat64)));
}

TEST(Autograd, SecondBackwardNeedsRetainGraph) {
  Tensor x = ones({2}, requires_grad());
  Tensor y = (x * x).sum();
  y.backward(Tensor(), true);
  y.backward();  // allowed: the graph was retained once
  EXPECT_TRUE(x.grad().allclose(full({2}, 4.0)));
  EXPECT_THAT(error_of([&] { y.backward(); }), HasSubstr("backward through the graph a second time"));
}

TEST(Autograd, NonScalarBackwardNeedsAGradient) {
  Tensor x = ones({2, 3}, requires_grad());
  EXPECT_THAT(error_of([&] { (x * 2).backward(); }),
              HasSubstr("grad can be implicitly created only for outputs with one element, got shape [2, 3]"));
  EXPECT_THAT(error_of([&] { (x * 2).backward(ones({3})); }), HasSubstr("has shape [3] but the tensor has shape [2, 3]"));
}

TEST(Autograd, BackwardOfATensorWithoutGradIsAnError) {
  Tensor x = ones({2});
  EXPECT_THAT(error_of([&] { x.sum().backward(); }), HasSubstr("does not require grad"));
}

TEST(Autograd, InPlaceChangeOfASavedTensorIsAnError) {
  Tensor a = randn({3}, requires_grad());
  Tensor b = a * 2;
  Tensor c = b * b;  // saves b
  b.add_(1);
  EXPECT_EQ(b._version(), 1u);
  std::string msg = error_of([&] { c.sum().backward(); });
  EXPECT_THAT(msg, HasSubstr("modified by an in-place operation"));
  EXPECT_THAT(msg, HasSubstr("is at version 1; expected version 0"));
}

TEST(Autograd, InPlaceOnALeafThatRequiresGradIsAnError) {
  Tensor w = ones({2}, requires_grad());
  EXPECT_THAT(error_of([&] { w.add_(1); }), HasSubstr("a leaf tensor that requires grad"));
  {
    NoGradGuard no_grad;
    w.add_(1);  // an optimizer update
  }
  EXPECT_TRUE(w.allclose(full({2}, 2.0)));
}

TEST(Autograd, InPlaceOnANonLeafKeepsTheGraph) {
  Tensor x = tensor({1.0, -2.0, 3.0}, kFloat64).requires_grad_();
  Tensor y = x * 2;
  y.relu_();
  EXPECT_EQ(y.grad_fn()->name(), "ReluBackward0");
  y.sum().backward();
  EXPECT_TRUE(x.grad().allclose(tensor({2.0, 0.0, 2.0}, kFloat64)));
}

TEST(Autograd, NoGradGuardStopsRecording) {
  Tensor x = ones({2}, requires_grad());
  {
    NoGradGuard no_grad;
    EXPECT_FALSE((x * 2).requires_grad());
    EXPECT_FALSE(GradMode::is_enabled());
  }
  EXPECT_TRUE((x * 2).requires_grad());
}

TEST(Autograd, InferenceModeStopsRecordingAndNestsWithFalse) {
  Tensor x = ones({2}, requires_grad());
  EXPECT_FALSE(InferenceMode::is_enabled());
  {
    InferenceMode guard;
    EXPECT_TRUE(InferenceMode::is_enabled());
    EXPECT_FALSE((x * 2).requires_grad());
    {
      InferenceMode off(false);  // libtorch's way back to recording inside an inference scope
      EXPECT_FALSE(InferenceMode::is_enabled());
      EXPECT_TRUE((x * 2).requires_grad());
    }
    EXPECT_TRUE(InferenceMode::is_enabled());
    EXPECT_FALSE(GradMode::is_enabled());
  }
  EXPECT_FALSE(InferenceMode::is_enabled());
  EXPECT_TRUE((x * 2).requires_grad());
}

TEST(Autograd, DetachSharesDataButNotHistory) {
  Tensor x = ones({2}, requires_grad());
  Tensor y = (x * 3).detach();
  EXPECT_FALSE(y.requires_grad());
  EXPECT_EQ(y.grad_fn(), nullptr);
  Tensor z = x * 1;
  Tensor d = z.detach();
  d.fill_(7);
  EXPECT_EQ(z[0].item<float>(), 7.0f);  // shared storage
}

TEST(Autograd, TensorHooksSeeAndReplaceGradients) {
  Tensor x = ones({3}, requires_grad());
  Tensor y = x * 2;
  Tensor seen;
  y.register_hook([&](const Tensor& g) { seen = g.clone(); });
  unsigned h = x.register_hook([](const Tensor& g) { return g * 10; });
  y.sum().backward();
  EXPECT_TRUE(seen.allclose(ones({3})));
  EXPECT_TRUE(x.grad().allclose(full({3}, 20.0)));
  x.remove_hook(h);
  x.mutable_grad() = Tensor();
  (x * 2).sum().backward();
  EXPECT_TRUE(x.grad().allclose(full({3}, 2.0)));
}

TEST(Autograd, RetainGradKeepsANonLeafGradient) {
  Tensor x = ones({2}, requires_grad());
  Tensor y = x * 3;
  y.retain_grad();
  (y * y).sum().backward();
  ASSERT_TRUE(y.grad().defined());
  EXPECT_TRUE(y.grad().allclose(full({2}, 6.0)));
}

TEST(Autograd, GradReturnsWithoutAccumulating) {
  Tensor x = tensor({1.0, 2.0}, kFloat64).requires_grad_();
  Tensor y = (x * x * x).sum();
  auto g = autograd::grad({y}, {x});
  EXPECT_TRUE(g[0].allclose(tensor({3.0, 12.0}, kFloat64)));
  EXPECT_FALSE(x.grad().defined());
  // Nor into leaves that are not among the inputs (PyTorch's autograd.grad leaves them alone too).
  Tensor v = tensor({5.0, 7.0}, kFloat64).requires_grad_();
  EXPECT_TRUE(autograd::grad({(x * v).sum()}, {x})[0].allclose(tensor({5.0, 7.0}, kFloat64)));
  EXPECT_FALSE(v.grad().defined());
  Tensor unused = ones({1}, requires_grad());
  EXPECT_THAT(error_of([&] { autograd::grad({(x * 2).sum()}, {unused}); }), HasSubstr("was not used"));
}

TEST(Autograd, CreateGraphGivesSecondDerivatives) {
  Tensor x = tensor({2.0}, kFloat64).requires_grad_();
  Tensor y = (x * x * x).sum();
  Tensor dy = autograd::grad({y}, {x}, {}, true, true)[0];  // 3x^2
  Tensor d2y = autograd::grad({dy.sum()}, {x})[0];         // 6x
  EXPECT_NEAR(d2y.item<double>(), 12.0, 1e-12);
}

// Double backward through a slice, a narrow and a select (gradient penalties, Hessian-vector
// products, DataParallel's scattered inputs): their backward is differentiable too.
TEST(Autograd, DoubleBackwardThroughASlice) {
  Tensor x = arange(10, kFloat64).reshape({5, 2}).requires_grad_();
  Tensor y = (x.narrow(0, 1, 3).pow(3).sum() + x.slice(0, 0, 5, 2).pow(3).sum() + x.select(1, 0).pow(3).sum());
  Tensor dy = autograd::grad({y}, {x}, {}, true, true)[0];  // 3 x^2 times how often each element is used
  Tensor d2y = autograd::grad({dy.sum()}, {x})[0];         // 6 x times the same count
  Tensor uses = zeros({5, 2}, kFloat64);
  uses.narrow(0, 1, 3).add_(1);
  uses.slice(0, 0, 5, 2).add_(1);
  uses.select(1, 0).add_(1);
  EXPECT_TRUE(allclose(dy, 3 * x.detach() * x.detach() * uses));
  EXPECT_TRUE(allclose(d2y, 6 * x.detach() * uses));
  EXPECT_TRUE(dy.requires_grad());
}

TEST(Autograd, AnomalyModeNamesTheOp) {
  DetectAnomalyGuard anomaly;
  Tensor x = tensor({0.0, 1.0}, kFloat64).requires_grad_();
  Tensor y = x.sqrt().sum();  // d sqrt(x)/dx is inf at 0
  std::string msg = error_of([&] { y.backward(); });
  EXPECT_THAT(msg, HasSubstr("anomaly detected"));
  EXPECT_THAT(msg, HasSubstr("SqrtBackward0"));
}

TEST(Autograd, CallbacksRunAtTheEndOfBackward) {
  Tensor x = ones({2}, requires_grad());
  std::vector<std::string> order;
  x.register_hook([&](const Tensor&) {
    order.push_back("hook");
    autograd::queue_callback([&] { order.push_back("callback"); });
  });
  (x * 2).sum().backward();
  EXPECT_EQ(order, (std::vector<std::string>{"hook", "callback"}));
  EXPECT_THAT(error_of([] { autograd::queue_callback([] {}); }), HasSubstr("outside a backward pass"));
}

TEST(Autograd, ErrorsInABackwardFunctionReachTheCaller) {
  Tensor x = ones({2}, requires_grad());
  Tensor y = x * 2;
  y.register_hook([](const Tensor&) -> Tensor { throw Error("boom in hook"); });
  EXPECT_THAT(error_of([&] { y.sum().backward(); }), HasSubstr("boom in hook"));
}

// Branches of one graph on cpu:0 and cpu:1 run their backward at the same time, on different
// threads: each branch's hook waits for the other's (a sequential engine would time out).
TEST(Autograd, BranchesOnTwoDevicesRunConcurrently) {
  set_device_count(std::max(2, device_count()));
  Tensor w = randn({8}, requires_grad());
  // The local branch is recorded first, so the engine (latest node first) hands the remote branch
  // to cpu:1 before it starts on the local one.
  Tensor local = w * 1;
  Tensor c = (local * 2).sum();
  Tensor remote = w.to(Device("cpu:1"));
  Tensor a = (remote * 3).sum().to(Device("cpu:0"));
  std::mutex m;
  std::condition_variable cv;
  int arrived = 0;
  bool both_seen = true;
  std::thread::id main_thread = std::this_thread::get_id(), remote_thread;
  auto rendezvous = [&] {
    std::unique_lock<std::mutex> l(m);
    ++arrived;
    cv.notify_all();
    if (!cv.wait_for(l, std::chrono::seconds(20), [&] { return arrived >= 2; })) both_seen = false;
  };
  remote.register_hook([&](const Tensor&) {
    remote_thread = std::this_thread::get_id();
    rendezvous();
  });
  local.register_hook([&](const Tensor&) { rendezvous(); });
  (a + c).backward();
  EXPECT_TRUE(both_seen);
  EXPECT_NE(remote_thread, main_thread);
  EXPECT_TRUE(w.grad().allclose(full({8}, 5.0)));
}

// Note [Device executor]: a device's backward nodes run on the thread that runs its parallel_apply
// replicas, so forward and backward of a device share one OpenMP pool.
TEST(Autograd, NodesOnAnotherDeviceRunOnThatDevicesExecutorThread) {
  set_device_count(std::max(2, device_count()));
  std::promise<std::thread::id> executor_thread;
  detail::DeviceExecutor::of(Device("cpu:1")).post([&] { executor_thread.set_value(std::this_thread::get_id()); });
  Tensor w = randn({4}, requires_grad());
  Tensor remote = w.to(Device("cpu:1")) * 1;
  std::thread::id hook_thread;
  remote.register_hook([&](const Tensor&) { hook_thread = std::this_thread::get_id(); });
  (remote * 2).sum().to(Device("cpu:0")).backward();
  EXPECT_EQ(hook_thread, executor_thread.get_future().get());
  EXPECT_TRUE(w.grad().allclose(full({4}, 2.0)));
}

// A pass started on cpu:1's thread (in a hook) whose first root is on cpu:0 and whose other nodes
// are on cpu:1: the waiting thread runs its own device's nodes (Note [Backward engine]).
TEST(Autograd, ABackwardStartedOnADeviceThreadRunsThatDevicesNodesWhileItWaits) {
  set_device_count(std::max(2, device_count()));
  Tensor w = randn({4}, requires_grad());
  Tensor remote = w.to(Device("cpu:1")) * 1;
  Tensor inner_grad;
  std::thread::id hook_thread, inner_thread;
  remote.register_hook([&](const Tensor&) {
    hook_thread = std::this_thread::get_id();
    EnableGradGuard enable;
    Tensor z = tensor({1.0, 2.0}, kFloat64).to(Device("cpu:1")).requires_grad_();
    Tensor y = z * z;
    y.register_hook([&](const Tensor&) { inner_thread = std::this_thread::get_id(); });
    inner_grad = autograd::grad({y.sum().to(Device("cpu:0"))}, {z})[0];
  });
  (remote * 2).sum().to(Device("cpu:0")).backward();
  EXPECT_EQ(inner_thread, hook_thread);
  EXPECT_EQ(inner_grad.device(), Device("cpu:1"));
  EXPECT_TRUE(inner_grad.to(Device("cpu:0")).allclose(tensor({2.0, 4.0}, kFloat64)));
  EXPECT_TRUE(w.grad().allclose(full({4}, 2.0)));
}

TEST(Autograd, InPlaceOpsThatSaveTheirInputStillDifferentiate) {
  Tensor x = tensor({1.0, 2.0}, kFloat64).requires_grad_();
  Tensor y = x * 1;
  y.mul_(y.detach() + 1);  // saves the old y
  y.log_();                // saves its input
  y.sum().backward();
  // d/dx log(x * (x + 1)) with x + 1 constant = 1 / x
  EXPECT_TRUE(x.grad().allclose(tensor({1.0, 0.5}, kFloat64)));
}

// Without retain_graph each node frees its saved tensors once it has run (Note [Freeing the graph as
// it runs]): when the first op's gradient arrives, the later ops' saved activations are gone; with
// retain_graph they are all still held.
TEST(Autograd, ANodesSavedTensorsAreFreedOnceItHasRun) {
  const Device cpu(kCPU, 0);
  Tensor x = randn({1024, 256}, requires_grad());  // 1 MiB per activation
  auto held_at_first_op = [&](bool retain) {
    int64_t held = -1;
    Tensor h = x.tanh();  // saves its output
    h.register_hook([&](const Tensor&) { held = memory_stats(cpu).allocated_bytes; });
    for (int i = 0; i < 8; ++i) h = h.tanh();
    const int64_t before = memory_stats(cpu).allocated_bytes;  // the 9 activations
    h.sum().backward({}, retain);
    h = Tensor();
    return held - before;
  };
  const int64_t freed = held_at_first_op(false), kept = held_at_first_op(true);
  // The 8 later activations (8 MiB) are gone by then, less the gradients in flight.
  EXPECT_LT(freed, kept - 6 * (int64_t{1} << 20)) << "freed " << freed << ", kept " << kept;
  EXPECT_THAT(error_of([&] {
                Tensor y = x.tanh().tanh();
                y.sum().backward();
                y.sum().backward();
              }),
              HasSubstr("TanhBackward0: trying to backward through the graph a second time"));
}
