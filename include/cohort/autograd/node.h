// Node: one step of the backward graph (a tensor's grad_fn). Every node has one output (the tensor it
// made) and one edge per input: next_functions()[i] is the node that receives the gradient w.r.t.
// input i (nullptr when that input needs none). See Note [Backward engine] in src/autograd/engine.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cohort/core/tensor.h"

namespace cohort::autograd {

class Node : public std::enable_shared_from_this<Node> {
 public:
  using Hook = std::function<Tensor(const Tensor&)>;

  Node(std::string name, std::vector<std::shared_ptr<Node>> next_functions, Device device);
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // PyTorch's names: "MulBackward0", "AccumulateGrad", ...
  const std::string& name() const { return name_; }
  const std::vector<std::shared_ptr<Node>>& next_functions() const { return next_; }
  // Backward of this node runs on this device's worker.
  Device device() const { return device_; }
  // Creation order; later nodes run first when both are ready.
  uint64_t sequence_nr() const { return sequence_nr_; }

  // Gradients w.r.t. each input, given the gradient w.r.t. the output. An undefined entry means
  // "no gradient" for that input.
  virtual std::vector<Tensor> apply(Tensor grad_output) = 0;
  // Frees what backward needed (saved tensors) once a pass without retain_graph is done.
  virtual void release() {}

  // Hooks on the gradient w.r.t. this node's output, run before apply.
  unsigned add_pre_hook(Hook hook);
  void remove_pre_hook(unsigned handle);
  Tensor run_pre_hooks(Tensor grad) const;

  // The forward op that made this node (for anomaly-mode messages).
  const std::string& forward_op() const { return forward_op_; }
  void set_forward_op(std::string op) { forward_op_ = std::move(op); }

 private:
  std::string name_;
  std::vector<std::shared_ptr<Node>> next_;
  Device device_;
  uint64_t sequence_nr_;
  std::vector<std::pair<unsigned, Hook>> pre_hooks_;
  unsigned next_hook_id_ = 0;
  std::string forward_op_;
};

std::ostream& operator<<(std::ostream& os, const Node& node);

}  // namespace cohort::autograd
