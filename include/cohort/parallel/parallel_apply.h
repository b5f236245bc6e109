// parallel::parallel_apply: each replica's forward on its device's thread, all at once.
//
//   auto inputs = parallel::scatter(p, x);                      // one std::tuple per replica
//   auto outputs = parallel::parallel_apply(replicas, inputs, p.devices);
//   // outputs[r] = replicas[r]->forward(std::get<0>(inputs[r])...), computed on p.devices[r]'s thread
//
// Replica 0 runs on the calling thread and every other replica on its device's persistent executor
// thread (the threads that run the same devices' backward nodes), each with the
// device's share of the cores as intra-op threads (Note [Threads per device] in
// src/core/threads.cpp), the caller's grad mode, and a copy of the caller's random generator
// (Note [Replica RNG] in parallel_apply.cpp): given the plan, random tensors drawn in forward equal
// one device's.
// The default dtype and anomaly mode are process-wide, so replicas see the caller's. One replica
// runs directly on the calling thread, drawing from the caller's generator, as a plain call would.
// Waits for every replica, then, if any threw, throws one cohort::Error that lists each failed
// replica: its index, device, input shapes and message. Throws cohort::Error when the three lists
// differ in length, DeviceError for a device that does not exist.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "cohort/core/device.h"
#include "cohort/core/generator.h"
#include "cohort/core/tensor.h"
#include "cohort/parallel/markers.h"
#include "cohort/parallel/plan.h"

namespace cohort::parallel {

namespace detail {

struct ReplicaJob {
  Device device;
  std::function<std::string()> inputs;  // the input shapes, for an error message (made only then)
  std::function<void()> run;
  std::optional<BatchSlice> slice;  // the replica's samples, when a plan says them
};
// Runs every job on its device's thread (inline when there is one job, or when called from a device
// thread), waits for all, and throws one Error listing the failures, prefixed with `op`.
void run_replicas(const char* op, std::vector<ReplicaJob>& jobs);
void check_apply_sizes(size_t replicas, size_t inputs, size_t devices);

// "[10, 5], {[2], [3]}, <value>": the shapes of the tensors in one replica's arguments (walk.h).
struct DescribeVisitor : TreeVisitor {
  std::ostream& os;
  explicit DescribeVisitor(std::ostream& out) : os(out) {}
  void enter(Container c) const { os << (c == Container::kTuple ? '(' : '{'); }
  void item(size_t i, const std::string* key) const {
    if (i) os << ", ";
    if (key) os << *key << ": ";
  }
  void leave(Container c) const { os << (c == Container::kTuple ? ')' : '}'); }
  void operator()(const Tensor& a, const std::string&) const {
    if (a.defined()) os << a.sizes(); else os << "<undefined>";
  }
  template <class T>
  void operator()(const T&, const std::string&) const { os << "<value>"; }
};
template <class Tuple>
std::string describe_arguments(const Tuple& args) {
  std::ostringstream os;
  const DescribeVisitor v(os);
  std::apply([&](const auto&... e) { size_t i = 0; ((os << (i++ ? ", " : ""), walk(v, e, std::string())), ...); }, args);
  return os.str();
}

// fn(replica, args...) with the arguments unpacked from a tuple.
template <class Fn, class M, class Tuple>
auto call_replica(Fn& fn, M& replica, const Tuple& args) {
  return std::apply([&](const auto&... a) { return fn(replica, a...); }, args);
}

template <class M, class Tuple, class Fn>
auto apply_jobs(const std::vector<std::shared_ptr<M>>& replicas, const std::vector<Tuple>& inputs,
                const std::vector<Device>& devices, const Plan* plan, Fn fn) {
  using Out = std::decay_t<decltype(call_replica(fn, *replicas[0], inputs[0]))>;
  check_apply_sizes(replicas.size(), inputs.size(), devices.size());
  std::vector<std::optional<Out>> slots(replicas.size());
  std::vector<ReplicaJob> jobs;
  for (size_t r = 0; r < replicas.size(); ++r) {
    jobs.push_back({devices[r], [&inputs, r] { return describe_arguments(inputs[r]); }, [&, r] {
                      slots[r].emplace(call_replica(fn, *replicas[r], inputs[r]));
                    }, std::nullopt});
    if (plan) jobs.back().slice = BatchSlice{plan->dim, plan->offsets[r], plan->chunk_sizes[r], plan->batch};
  }
  run_replicas("parallel_apply", jobs);
  std::vector<Out> outputs;
  outputs.reserve(slots.size());
  for (auto& s : slots) outputs.push_back(std::move(*s));
  return outputs;
}

}  // namespace detail

// outputs[r] = fn(*replicas[r], args of inputs[r]...) on devices[r]'s thread; see above.
template <class M, class Tuple, class Fn>
auto parallel_apply(const std::vector<std::shared_ptr<M>>& replicas, const std::vector<Tuple>& inputs,
                    const std::vector<Device>& devices, Fn fn) {
  return detail::apply_jobs(replicas, inputs, devices, nullptr, fn);
}

// The same on the plan's devices, with each replica told which samples it holds, so that random
// tensors drawn in forward (dropout) do not depend on the split (Note [Replica RNG]).
template <class M, class Tuple, class Fn>
auto parallel_apply(const std::vector<std::shared_ptr<M>>& replicas, const std::vector<Tuple>& inputs,
                    const Plan& plan, Fn fn) {
  return detail::apply_jobs(replicas, inputs, plan.devices, &plan, fn);
}

// The same with each replica's forward(args...).
template <class M, class Tuple>
auto parallel_apply(const std::vector<std::shared_ptr<M>>& replicas, const std::vector<Tuple>& inputs,
                    const std::vector<Device>& devices) {
  return parallel_apply(replicas, inputs, devices, [](M& m, const auto&... a) { return m.forward(a...); });
}

}  // namespace cohort::parallel
