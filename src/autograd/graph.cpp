// The boundary of a backward graph: the leaves it ends at and the older history it reaches.
#include "cohort/autograd/graph.h"

#include <unordered_set>

#include "autograd/function_node.h"

namespace cohort::autograd {

GraphBoundary graph_boundary(const std::vector<Tensor>& outputs, uint64_t since) {
  GraphBoundary boundary;
  std::unordered_set<const Node*> seen;
  std::unordered_set<const TensorImpl*> leaves;
  auto add_leaf = [&](const Tensor& t) {
    if (leaves.insert(t.impl().get()).second) boundary.leaves.push_back(t);
  };
  std::vector<Node*> stack;  // iterative: graphs can be deeper than the stack
  for (const Tensor& out : outputs) {
    if (!out.defined() || !out.requires_grad()) continue;
    if (std::shared_ptr<Node> fn = out.grad_fn()) {
      if (seen.insert(fn.get()).second) stack.push_back(fn.get());
    } else {
      add_leaf(out);
    }
  }
  while (!stack.empty()) {
    Node* node = stack.back();
    stack.pop_back();
    if (const auto* acc = dynamic_cast<const AccumulateGrad*>(node)) {
      add_leaf(Tensor(acc->variable()));
      continue;
    }
    if (node->sequence_nr() < since) {
      boundary.older_nodes.push_back(node->shared_from_this());
      continue;
    }
    for (const auto& next : node->next_functions())
      if (next && seen.insert(next.get()).second) stack.push_back(next.get());
  }
  return boundary;
}

std::vector<Tensor> graph_leaves(const Tensor& output) { return graph_boundary({output}, 0).leaves; }

}  // namespace cohort::autograd
