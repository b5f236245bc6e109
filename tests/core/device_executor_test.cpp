// The per-device executor (Note [Device executor]): one thread per device, plain jobs in arrival
// order, ranked jobs highest first, the two kinds taking turns, a job that waits running the ranked
// jobs queued behind it, the device's thread share before every job, and a thread that survives a
// job's exception.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cohort/core/error.h"
#include "support/error_of.h"
#include "cohort/core/threads.h"
#include "core/device_executor.h"
#include "core/wait_policy.h"
#include "support/devices.h"

using cohort::Device;
using cohort::detail::DeviceExecutor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {

class Executor : public cohort::testing::WithDevices<3> {};

// Runs `f` as a plain job on `device`'s thread and returns once it has run.
template <typename F>
void run_on(Device device, F f) {
  std::promise<void> done;
  DeviceExecutor::of(device).post([&] {
    f();
    done.set_value();
  });
  done.get_future().wait();
}

std::thread::id thread_of(Device device) {
  std::thread::id id;
  run_on(device, [&] { id = std::this_thread::get_id(); });
  return id;
}

TEST_F(Executor, PlainJobsRunInArrivalOrderOnOneThreadPerDevice) {
  DeviceExecutor& e = DeviceExecutor::of(Device("cpu:1"));
  EXPECT_EQ(&DeviceExecutor::of(Device("cpu:1")), &e);
  EXPECT_EQ(e.device(), Device("cpu:1"));
  std::vector<int> order;
  std::vector<std::thread::id> threads;
  std::vector<DeviceExecutor*> current;
  for (int i = 0; i < 5; ++i) {
    e.post([&, i] {
      order.push_back(i);
      threads.push_back(std::this_thread::get_id());
      current.push_back(DeviceExecutor::current());
    });
  }
  run_on(Device("cpu:1"), [] {});  // after the five
  EXPECT_THAT(order, ElementsAre(0, 1, 2, 3, 4));
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(threads[i], threads[0]);
    EXPECT_EQ(current[i], &e);
  }
  EXPECT_NE(threads[0], std::this_thread::get_id());
  EXPECT_NE(thread_of(Device("cpu:2")), threads[0]);
  EXPECT_EQ(DeviceExecutor::current(), nullptr);
}

// Queued while the thread is busy: after a plain job the highest ranked one runs, after a ranked job
// the oldest plain one; equal ranks in arrival order.
TEST_F(Executor, RankedAndPlainJobsTakeTurns) {
  DeviceExecutor& e = DeviceExecutor::of(Device("cpu:1"));
  std::promise<void> started, release;
  std::shared_future<void> released = release.get_future().share();
  e.post([&] {
    started.set_value();
    released.wait();
  });
  started.get_future().wait();
  std::mutex m;
  std::vector<std::string> order;
  auto record = [&](std::string name) {
    return [&m, &order, name] {
      std::lock_guard<std::mutex> l(m);
      order.push_back(name);
    };
  };
  e.post(record("p1"));
  e.post_ranked(1, record("r1"));
  e.post_ranked(5, record("r5"));
  e.post(record("p2"));
  e.post_ranked(3, record("r3"));
  e.post_ranked(5, record("r5 again"));
  e.post(record("p3"));
  release.set_value();
  run_on(Device("cpu:1"), [] {});
  EXPECT_THAT(order, ElementsAre("r5", "p1", "r5 again", "p2", "r3", "p3", "r1"));
}

// A job that waits for work queued to its own thread runs that work itself; plain jobs queued
// meanwhile wait for it. Works nested: a ranked job that waits in turn.
TEST_F(Executor, AJobThatWaitsRunsTheRankedJobsQueuedBehindIt) {
  DeviceExecutor& e = DeviceExecutor::of(Device("cpu:1"));
  std::vector<std::string> order;  // only cpu:1's thread writes it
  std::thread::id outer_thread, inner_thread;
  run_on(Device("cpu:1"), [&] {
    outer_thread = std::this_thread::get_id();
    std::atomic<bool> outer_done{false};
    e.post([&] { order.push_back("plain, queued while waiting"); });
    e.post_ranked(2, [&] {
      order.push_back("ranked 2");
      std::atomic<bool> inner_done{false};
      e.post_ranked(1, [&] {
        inner_thread = std::this_thread::get_id();
        order.push_back("ranked 1, queued by ranked 2");
        inner_done = true;
        e.wake();
      });
      e.run_ranked_until(inner_done);
      order.push_back("ranked 2 done");
      outer_done = true;
      e.wake();
    });
    e.run_ranked_until(outer_done);
    order.push_back("outer done");
  });
  run_on(Device("cpu:1"), [] {});
  EXPECT_THAT(order, ElementsAre("ranked 2", "ranked 1, queued by ranked 2", "ranked 2 done", "outer done",
                                 "plain, queued while waiting"));
  EXPECT_EQ(inner_thread, outer_thread);
}

// Note [Threads per device]: every job starts with the device's share, whatever the job before it
// set; a job that waits gets its own count back after the ranked jobs it ran.
TEST_F(Executor, EveryJobStartsWithTheDevicesThreadShare) {
  const Device d("cpu:2");
  const int share = cohort::device_num_threads(d);
  const int other = share == 1 ? 2 : 1;
  DeviceExecutor& e = DeviceExecutor::of(d);
  int first = 0, nested = 0, after_wait = 0, next = 0;
  run_on(d, [&] {
    first = cohort::get_num_threads();
    cohort::set_num_threads(other);
    std::atomic<bool> done{false};
    e.post_ranked(0, [&] {
      nested = cohort::get_num_threads();
      done = true;
      e.wake();
    });
    e.run_ranked_until(done);
    after_wait = cohort::get_num_threads();
  });
  run_on(d, [&] { next = cohort::get_num_threads(); });
  EXPECT_EQ(first, share);
  EXPECT_EQ(nested, share);
  EXPECT_EQ(after_wait, other);
  EXPECT_EQ(next, share);
}

TEST_F(Executor, AnEscapingExceptionIsReportedAndTheThreadGoesOn) {
  const Device d("cpu:1");
  std::thread::id before = thread_of(d);
  ::testing::internal::CaptureStderr();
  DeviceExecutor::of(d).post([] { throw std::runtime_error("boom in a job"); });
  DeviceExecutor::of(d).post_ranked(7, [] { throw 42; });
  std::thread::id after = thread_of(d);
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(after, before);
  EXPECT_THAT(err, HasSubstr("a job on cpu:1's thread threw (it should have caught it): boom in a job"));
  EXPECT_THAT(err, HasSubstr("a job on cpu:1's thread threw a non-std::exception"));
}

// run_on_devices, parallel_apply's runner: the first job on the caller, the others on their devices'
// executors, at once; a nested call runs its jobs in turn on the executor's thread.
TEST_F(Executor, RunOnDevicesRunsTheFirstJobOnTheCallerAndTheOthersOnTheirExecutors) {
  const std::vector<Device> devices{Device("cpu:0"), Device("cpu:1"), Device("cpu:2")};
  std::vector<std::thread::id> ran(3);
  std::vector<std::thread::id> nested(2);
  std::vector<std::function<void()>> jobs;
  for (size_t i = 0; i < 3; ++i) jobs.push_back([&, i] { ran[i] = std::this_thread::get_id(); });
  jobs[2] = [&] {
    ran[2] = std::this_thread::get_id();
    cohort::run_on_devices({Device("cpu:0"), Device("cpu:1")}, {[&] { nested[0] = std::this_thread::get_id(); },
                                                               [&] { nested[1] = std::this_thread::get_id(); }});
  };
  cohort::run_on_devices(devices, jobs);
  EXPECT_EQ(ran[0], std::this_thread::get_id());
  EXPECT_EQ(ran[1], thread_of(Device("cpu:1")));
  EXPECT_EQ(ran[2], thread_of(Device("cpu:2")));
  EXPECT_EQ(nested[0], ran[2]);
  EXPECT_EQ(nested[1], ran[2]);
  EXPECT_FALSE(cohort::on_device_thread());
  EXPECT_THAT(cohort::testing::error_of([&] { cohort::run_on_devices(devices, {}); }),
              HasSubstr("run_on_devices: expected one device per job, got 3 devices and 0 jobs"));
}

TEST_F(Executor, ADeviceOutOfRangeIsAnError) {
  EXPECT_THROW(DeviceExecutor::of(Device(cohort::kCPU, 4096)), cohort::DeviceError);
}

}  // namespace

namespace {

// Note [Hand-off wait]: the spin before sleeping follows OMP_WAIT_POLICY as libgomp's does.
TEST(HandOffWait, FollowsOmpWaitPolicy) {
  using cohort::detail::hand_off_spin_ns_for;
  const int64_t unset = hand_off_spin_ns_for(nullptr, 2, 2, false);
  EXPECT_GT(unset, 0);
  EXPECT_LE(unset, 1'000'000);  // bounded: a wait that lasts longer sleeps
  EXPECT_EQ(hand_off_spin_ns_for("", 2, 2, false), unset);
  EXPECT_EQ(hand_off_spin_ns_for("PASSIVE", 2, 2, false), 0);
  EXPECT_EQ(hand_off_spin_ns_for(" passive", 2, 2, false), 0);
  EXPECT_EQ(hand_off_spin_ns_for("Passive", 1, 8, false), 0);
  EXPECT_GT(hand_off_spin_ns_for("ACTIVE", 2, 2, false), unset);
  EXPECT_LE(hand_off_spin_ns_for("active", 2, 2, false), 10'000'000);
  EXPECT_EQ(hand_off_spin_ns_for("unknown", 2, 2, false), unset);
  // More devices than cores: their threads would spin on cores the others need.
  EXPECT_EQ(hand_off_spin_ns_for(nullptr, 4, 2, false), 0);
  EXPECT_EQ(hand_off_spin_ns_for("active", 3, 2, false), 0);
  // Other processes keep some of the cores busy: they want the cores the spinner would hold.
  EXPECT_EQ(hand_off_spin_ns_for(nullptr, 2, 2, false), unset);
  EXPECT_EQ(hand_off_spin_ns_for(nullptr, 2, 2, true), 0);
  EXPECT_EQ(hand_off_spin_ns_for("active", 2, 2, true), 0);
}

TEST(HandOffWait, SpinUntilReturnsWhatItSawAndStopsAtTheBudget) {
  std::atomic<bool> flag{true};
  EXPECT_TRUE(cohort::detail::spin_until([&] { return flag.load(); }));
  flag = false;
  // Whatever the process's policy, it returns (false: nobody sets the flag).
  EXPECT_FALSE(cohort::detail::spin_until([&] { return flag.load(); }));
  std::thread setter([&] { flag = true; });
  setter.join();
  EXPECT_TRUE(cohort::detail::spin_until([&] { return flag.load(); }));
}

}  // namespace
