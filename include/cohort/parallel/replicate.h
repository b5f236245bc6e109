// parallel::replicate: copies of a module on other devices, built once and kept in step with it.
//
//   auto replicas = parallel::replicate(net, {"cpu:0", "cpu:1"});   // std::vector<std::shared_ptr<Net>>
//   parallel::ReplicaSync sync(net, {replicas[0], replicas[1]});
//   sync.synchronize({0, 1});   // before each forward: changed buffers copied in, parameters linked to net's
//
// replicate uses Module::clone(device) (nn::Cloneable, models::Model::clone_model), so a module that
// cannot clone throws its hint. Each replica is a deep copy; see Note [Replica synchronisation] in
// src/parallel/replicate.cpp for how ReplicaSync keeps replicas equal to the master and routes their
// gradients into the master's .grad.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cohort/core/device.h"
#include "cohort/nn/module.h"

namespace cohort::parallel {

namespace detail {
std::shared_ptr<nn::Module> clone_to(const nn::Module& module, Device device);
[[noreturn]] void throw_wrong_type(const nn::Module& module, Device device);
}  // namespace detail

// One deep copy of `module` per device, of the module's own type (no forward hooks on the copy
// itself). Throws cohort::Error when the module cannot clone, DeviceError for a missing device.
template <class M>
std::vector<std::shared_ptr<M>> replicate(const std::shared_ptr<M>& module, const std::vector<Device>& devices) {
  std::vector<std::shared_ptr<M>> out;
  for (Device d : devices) {
    auto copy = std::dynamic_pointer_cast<M>(detail::clone_to(*module, d));
    if (!copy) detail::throw_wrong_type(*module, d);
    out.push_back(std::move(copy));
  }
  return out;
}

// How many tensors synchronize() copied: the test of "only when changed". Only buffers are ever
// copied: replicas read the master's parameters (Note [Replica synchronisation]).
struct SyncStats {
  int64_t buffers_copied = 0;
  int64_t bytes_copied = 0;
};

// How a replica's gradients reach the master's .grad.
enum class ReplicaGradients {
  // Each replica parameter is a differentiable copy of its master: one backward of the gathered
  // output runs every replica's graph and sums into master.grad (DataParallel::forward).
  kThroughMaster,
  // Each replica parameter is a leaf of its own: a replica's backward stops there, and accumulate()
  // hands the replicas' gradients to the master afterwards (DataParallel::forward_backward).
  kOwn
};

// Keeps replicas (made by replicate from `master`) in step with the master, across calls.
class ReplicaSync {
 public:
  ReplicaSync(std::shared_ptr<nn::Module> master, std::vector<std::shared_ptr<nn::Module>> replicas);
  ~ReplicaSync();
  ReplicaSync(ReplicaSync&&) noexcept;
  ReplicaSync& operator=(ReplicaSync&&) noexcept;

  // Before a forward that uses the replicas numbered in `which`: points every replica parameter at
  // its master's memory (the master's storage on its device, an alias elsewhere), copies every
  // buffer whose value changed on either side since the last copy, follows the master's train/eval
  // mode, and, under grad mode, makes each replica parameter a differentiable copy of its master
  // (gradients sum into master.grad) or, with ReplicaGradients::kOwn, a leaf that requires grad as
  // its master does.
  // Calls for different replicas may run at the same time on different threads (each replica on its
  // device's thread, copying its own buffers), once one call has linked every master parameter
  // in this grad mode and while nothing writes the master: the first link makes a master's gradient
  // accumulator, later ones only find it.
  void synchronize(const std::vector<size_t>& which, ReplicaGradients gradients = ReplicaGradients::kThroughMaster);
  // After a kOwn synchronize: replica r's tensors that take gradients (its parameters, and buffers
  // that require grad, whose masters require grad), in a fixed order.
  std::vector<Tensor> gradient_leaves(size_t r) const;
  // Sums grads[k] (replica which[k]'s gradients, one per gradient_leaves(), undefined where it has
  // none) into the master tensors' .grad with one backward pass over the masters, so their tensor
  // hooks, post-accumulate hooks (DistributedDataParallel's) and queued callbacks run as in any
  // backward. Gradients on another device are read in place through aliases.
  void accumulate(const std::vector<size_t>& which, std::vector<std::vector<Tensor>> grads);
  // After the forward of the replicas in `which`: throws cohort::Error, naming `op` and the
  // parameter, when one was written in place since their synchronize (the replicas share it, so
  // writes from several would race).
  void check_parameters_unwritten(const std::vector<size_t>& which, const char* op) const;
  const SyncStats& stats() const;
  const std::vector<std::shared_ptr<nn::Module>>& replicas() const;

  struct State;

 private:
  std::unique_ptr<State> state_;
};

}  // namespace cohort::parallel
