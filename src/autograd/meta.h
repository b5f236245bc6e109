// Per-tensor autograd state, allocated only for tensors that take part in autograd.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "cohort/autograd/node.h"

namespace cohort::autograd {

struct AutogradMeta {
  bool requires_grad = false;
  Tensor grad;
  std::shared_ptr<Node> grad_fn;             // null for leaves
  std::weak_ptr<Node> grad_accumulator;      // leaves: the AccumulateGrad node, made on demand
  std::vector<std::pair<unsigned, Node::Hook>> leaf_hooks;  // leaves: run before accumulation
  std::vector<std::pair<unsigned, Tensor::PostAccumulateGradHook>> post_accumulate_hooks;  // leaves: run after
  unsigned next_hook_id = 0;
  bool retains_grad = false;
  unsigned retain_hook = 0;
};

// The node that receives gradients for `t`: its grad_fn, or its AccumulateGrad for a leaf that
// requires grad, or null.
std::shared_ptr<Node> gradient_edge(const Tensor& t);

}  // namespace cohort::autograd
