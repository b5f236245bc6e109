// parallel_apply: one thread per device (replica 0's the caller's), grad mode carried over, one error naming every failed
// replica, random tensors that do not depend on the split; the replicas' backward on the threads that
// ran their forward; backward inside a replica and parallel_apply inside backward.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include <cohort/cohort.h>
#include <cohort/parallel/data_parallel.h>
#include <cohort/parallel/parallel_apply.h>
#include <cohort/parallel/scatter.h>

#include "support/error_of.h"
#include "support/devices.h"

using namespace cohort;
using cohort::testing::error_of;
using ::testing::HasSubstr;

namespace {

struct Probe : nn::Module {
  Tensor forward(const Tensor& x) {
    grad_enabled = GradMode::is_enabled();
    thread = std::this_thread::get_id();
    threads = get_num_threads();
    COHORT_CHECK(x.size(0) != fail_size, "Probe: refusing a chunk of ", x.size(0));
    return x * 2;
  }
  bool grad_enabled = false;
  std::thread::id thread;
  int threads = 0;
  int64_t fail_size = -1;
};

class ParallelApply : public cohort::testing::WithDevices<3> {
 protected:
  std::vector<Device> devices{"cpu:0", "cpu:1", "cpu:2"};
};

TEST_F(ParallelApply, RunsEachReplicaOnItsOwnThreadWithTheCallersGradMode) {
  std::vector<std::shared_ptr<Probe>> replicas{std::make_shared<Probe>(), std::make_shared<Probe>(), std::make_shared<Probe>()};
  Tensor x = randn({10, 4});
  auto p = parallel::plan(devices, {}, x);
  auto inputs = parallel::scatter(p, x);
  {
    NoGradGuard no_grad;
    auto out = parallel::parallel_apply(replicas, inputs, p.devices);
    ASSERT_EQ(out.size(), 3u);
    EXPECT_TRUE(allclose(out[1], std::get<0>(inputs[1]) * 2));
    EXPECT_EQ(out[2].device(), Device("cpu:2"));
  }
  for (auto& r : replicas) EXPECT_FALSE(r->grad_enabled);
  EXPECT_NE(replicas[0]->thread, replicas[1]->thread);
  EXPECT_NE(replicas[1]->thread, std::this_thread::get_id());
  int total = 0;
  for (auto& r : replicas) total += r->threads;
  EXPECT_LE(total, std::max(core_count(), 3));  // the cores divided, at least one each
  parallel::parallel_apply(replicas, inputs, p.devices);
  for (auto& r : replicas) EXPECT_TRUE(r->grad_enabled);
}

TEST_F(ParallelApply, ListsEveryFailedReplicaInOneError) {
  std::vector<std::shared_ptr<Probe>> replicas{std::make_shared<Probe>(), std::make_shared<Probe>(), std::make_shared<Probe>()};
  for (auto& r : replicas) r->fail_size = 3;  // 10 on 3 -> 4, 3, 3: replicas 1 and 2 fail
  Tensor x = randn({10, 4});
  auto p = parallel::plan(devices, {}, x);
  auto inputs = parallel::scatter(p, x);
  std::string msg = error_of([&] { parallel::parallel_apply(replicas, inputs, p.devices); });
  EXPECT_THAT(msg, HasSubstr("parallel_apply: 2 of 3 replicas failed"));
  EXPECT_THAT(msg, HasSubstr("replica 1 on cpu:1 (inputs [3, 4]): Probe: refusing a chunk of 3"));
  EXPECT_THAT(msg, HasSubstr("replica 2 on cpu:2"));
  EXPECT_THAT(msg, ::testing::Not(HasSubstr("replica 0")));
  // Nothing hangs, and the threads are usable again.
  for (auto& r : replicas) r->fail_size = -1;
  EXPECT_EQ(parallel::parallel_apply(replicas, inputs, p.devices).size(), 3u);
}

TEST_F(ParallelApply, MismatchedListsAreAnError) {
  std::vector<std::shared_ptr<Probe>> replicas{std::make_shared<Probe>()};
  std::vector<std::tuple<Tensor>> inputs{{randn({2})}, {randn({2})}};
  EXPECT_THAT(error_of([&] { parallel::parallel_apply(replicas, inputs, devices); }),
              HasSubstr("got 1 replicas, 2 inputs and 3 devices"));
}

struct Noise : nn::Module {
  Tensor forward(const Tensor& x) { return x + randn(x.sizes(), TensorOptions().device(x.device())); }
};

// Note [Replica RNG]: given the plan, each replica's noise is its slice of what one device draws for
// the whole batch (chunks 4 and 3 here), and the caller's stream continues as after one device.
TEST_F(ParallelApply, RandomTensorsInForwardAreSlicesOfOneDevicesDraw) {
  std::vector<std::shared_ptr<Noise>> noise{std::make_shared<Noise>(), std::make_shared<Noise>()};
  std::vector<Device> two{"cpu:0", "cpu:1"};
  Tensor x = zeros({7, 2});
  auto p = parallel::plan(two, {}, x);
  auto inputs = parallel::scatter(p, x);
  manual_seed(7);
  Tensor whole = Noise().forward(x);
  Tensor next = randn({3});
  auto forward = [](Noise& m, const Tensor& a) { return m.forward(a); };

  manual_seed(7);
  auto outputs = parallel::parallel_apply(noise, inputs, p, forward);
  EXPECT_TRUE(equal(cat({outputs[0], outputs[1].to("cpu:0")}), whole));
  EXPECT_TRUE(equal(randn({3}), next));

  // Without the plan the replicas do not know their samples: each numbers its chunk from 0.
  manual_seed(7);
  auto bare = parallel::parallel_apply(noise, inputs, p.devices);
  EXPECT_TRUE(equal(bare[0], whole.slice(0, 0, 4)));
  EXPECT_TRUE(equal(bare[1].to("cpu:0"), whole.slice(0, 0, 3)));

  // Replicas that draw nothing leave the caller's stream where it was.
  std::vector<std::shared_ptr<Probe>> probes{std::make_shared<Probe>(), std::make_shared<Probe>()};
  manual_seed(3);
  Tensor expected = randn({3});
  manual_seed(3);
  parallel::parallel_apply(probes, inputs, p.devices);
  EXPECT_TRUE(equal(randn({3}), expected));
}

// Backward of each replica runs on the thread that ran its forward (its device's executor, Note
// [Device executor]), with that device's thread share; cpu:0's backward runs on the caller, the
// engine's owner thread (Note [Backward engine]).
struct ThreadProbe : nn::Cloneable<ThreadProbe> {
  using Probes = std::pair<std::mutex, std::vector<std::tuple<std::string, Device, std::thread::id, int>>>;
  ThreadProbe() { reset(); }
  void reset() override { fc = register_module("fc", nn::Linear(2, 2)); }
  Tensor forward(const Tensor& x) {
    Device d = x.device();
    auto record = probes;
    auto note = [record, d](const char* pass) {
      std::lock_guard<std::mutex> l(record->first);
      record->second.emplace_back(pass, d, std::this_thread::get_id(), get_num_threads());
    };
    note("forward");
    Tensor h = fc(x);
    h.register_hook([note](const Tensor&) { note("backward"); });
    return h;
  }
  nn::Linear fc{nullptr};
  std::shared_ptr<Probes> probes = std::make_shared<Probes>();
};

TEST_F(ParallelApply, ReplicaBackwardRunsOnItsForwardsThreadWithItsThreadShare) {
  auto net = std::make_shared<ThreadProbe>();
  nn::DataParallel<ThreadProbe> dp(net, devices);
  const int caller_threads = get_num_threads();
  dp.forward(randn({6, 2})).sum().backward();
  EXPECT_EQ(get_num_threads(), caller_threads);  // restored after the pass
  ASSERT_EQ(net->probes->second.size(), 6u);
  std::map<Device, std::thread::id> forward_thread;
  for (const auto& [pass, device, thread, threads] : net->probes->second) {
    EXPECT_EQ(threads, device_num_threads(device)) << pass << " on " << device;
    // Every device's forward and backward run on one thread: cpu:0's on the caller's, the others on
    // their executors.
    if (pass == "forward") forward_thread[device] = thread;
    else EXPECT_EQ(thread, forward_thread.at(device)) << device;
    if (device == Device("cpu:0")) EXPECT_EQ(thread, std::this_thread::get_id()) << pass;
    else EXPECT_NE(thread, std::this_thread::get_id()) << pass << " on " << device;
  }
}

// A replica that runs a backward pass inside its forward (a gradient penalty, say): its device's
// thread waits for the pass and runs the pass's nodes on its device itself.
struct InputGradient : nn::Module {
  Tensor forward(const Tensor& x) {
    EnableGradGuard enable;
    Tensor z = x.detach().requires_grad_();
    return autograd::grad({(z * z * z).sum()}, {z})[0];
  }
};

TEST_F(ParallelApply, AReplicaMayRunBackwardInItsForward) {
  std::vector<std::shared_ptr<InputGradient>> replicas{std::make_shared<InputGradient>(),
                                                       std::make_shared<InputGradient>(),
                                                       std::make_shared<InputGradient>()};
  Tensor x = randn({9, 2});
  auto p = parallel::plan(devices, {}, x);
  auto inputs = parallel::scatter(p, x);
  auto out = parallel::parallel_apply(replicas, inputs, p.devices);
  Tensor whole = cat({out[0], out[1].to("cpu:0"), out[2].to("cpu:0")});
  EXPECT_TRUE(allclose(whole, x * x * 3));
}

// grad() in a replica runs only the nodes on a path to its inputs: the AccumulateGrad of a module
// parameter on cpu:0 is not queued behind replica 0's forward, which here waits for replica 1's grad().
struct GradThenSignal : nn::Module {
  Tensor forward(const Tensor& x) {
    EnableGradGuard enable;
    if (x.device() == Device("cpu:0")) {  // replica 0 holds cpu:0's thread until replica 1 is done
      std::unique_lock<std::mutex> l(*mutex);
      *waited_out = !cv->wait_for(l, std::chrono::seconds(20), [&] { return *done; });
      return x;
    }
    Tensor z = x.detach().requires_grad_();
    Tensor g = autograd::grad({(z * master->to(x.device())).sum()}, {z})[0];
    std::lock_guard<std::mutex> l(*mutex);
    *done = true;
    cv->notify_all();
    return g;
  }
  Tensor* master;
  std::mutex* mutex;
  std::condition_variable* cv;
  bool *done, *waited_out;
};

TEST_F(ParallelApply, GradInAReplicaSkipsTheParametersItDoesNotAskFor) {
  Tensor w = randn({2}, requires_grad());
  std::mutex m;
  std::condition_variable cv;
  bool done = false, waited_out = false;
  auto make = [&] {
    auto r = std::make_shared<GradThenSignal>();
    r->master = &w, r->mutex = &m, r->cv = &cv, r->done = &done, r->waited_out = &waited_out;
    return r;
  };
  std::vector<std::shared_ptr<GradThenSignal>> replicas{make(), make()};
  std::vector<std::tuple<Tensor>> inputs{{ones({3, 2})}, {ones({3, 2}, TensorOptions().device("cpu:1"))}};
  auto out = parallel::parallel_apply(replicas, inputs, {Device("cpu:0"), Device("cpu:1")});
  EXPECT_FALSE(waited_out) << "replica 1's grad() waited for cpu:0's thread";
  EXPECT_TRUE(allclose(out[1].to(Device("cpu:0")), w.detach().expand({3, 2})));
  EXPECT_FALSE(w.grad().defined());
}

// parallel_apply in a hook that runs on a device's thread runs its replicas inline there: that
// thread is busy with the hook, so a replica queued to it would wait for the hook.
TEST_F(ParallelApply, InsideABackwardHookOnADeviceThreadTheReplicasRunInline) {
  std::vector<std::shared_ptr<Probe>> probes{std::make_shared<Probe>(), std::make_shared<Probe>()};
  std::vector<Device> two{"cpu:0", "cpu:1"};
  Tensor w = randn({4}, requires_grad());
  Tensor remote = w.to(Device("cpu:1")) * 1;
  std::thread::id hook_thread;
  std::vector<Tensor> outputs;
  remote.register_hook([&](const Tensor&) {
    hook_thread = std::this_thread::get_id();
    std::vector<std::tuple<Tensor>> inputs{{ones({2})}, {ones({3}, TensorOptions().device("cpu:1"))}};
    outputs = parallel::parallel_apply(probes, inputs, two);
  });
  (remote * 2).sum().to(Device("cpu:0")).backward();
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_TRUE(equal(outputs[1].to("cpu:0"), full({3}, 2.0)));
  EXPECT_NE(hook_thread, std::this_thread::get_id());
  for (auto& p : probes) EXPECT_EQ(p->thread, hook_thread);
}

}  // namespace
