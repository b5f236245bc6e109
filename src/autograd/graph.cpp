// autograd::graph_leaves: a walk over the nodes reachable from a tensor's grad_fn.
#include "cohort/autograd/graph.h"

#include <memory>
#include <unordered_set>

#include "autograd/function_node.h"

namespace cohort::autograd {

std::vector<Tensor> graph_leaves(const Tensor& output) {
  if (!output.defined() || !output.requires_grad()) return {};
  std::shared_ptr<Node> root = output.grad_fn();
  if (!root) return {output};
  std::vector<Tensor> leaves;
  std::unordered_set<const Node*> seen{root.get()};
  std::vector<const Node*> stack{root.get()};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    // An AccumulateGrad node is made once per leaf, so each leaf is met once.
    if (const auto* acc = dynamic_cast<const AccumulateGrad*>(n)) leaves.emplace_back(acc->variable());
    for (const auto& next : n->next_functions())
      if (next && seen.insert(next.get()).second) stack.push_back(next.get());
  }
  return leaves;
}

}  // namespace cohort::autograd
