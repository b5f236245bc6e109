// Questions about a backward graph from outside autograd, without its node classes: the boundary
// of a piece of forward (utils::checkpoint finds the parameters a function used) and the leaves a
// backward would accumulate into (DataParallel names a tensor a replica should not reach).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "cohort/autograd/node.h"
#include "cohort/core/tensor.h"

namespace cohort::autograd {

// The sequence number the next node made will have (Node::sequence_nr): nodes made after this call
// have this number or more.
uint64_t next_sequence_nr();

struct GraphBoundary {
  // The leaves that require grad whose gradient accumulator the graph reaches (or that are outputs
  // themselves), each once, in the order first reached.
  std::vector<Tensor> leaves;
  // The nodes made before `since` that the graph reaches, each once: history from outside the
  // piece (a non-leaf tensor it used), not walked further.
  std::vector<std::shared_ptr<Node>> older_nodes;
};

// Walks the graph of `outputs` back from their grad_fn. Touches no data and runs nothing.
GraphBoundary graph_boundary(const std::vector<Tensor>& outputs, uint64_t since);

// The leaves whose .grad a backward of `output` would accumulate into, each once, in the order a
// depth-first search from output's grad_fn meets them (a node's last input first): `output` itself
// when it is such a leaf; empty when it does not require grad. graph_boundary({output}, 0).leaves.
std::vector<Tensor> graph_leaves(const Tensor& output);

}  // namespace cohort::autograd
