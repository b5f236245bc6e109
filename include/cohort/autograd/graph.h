// Questions about the backward graph from outside autograd, without its node classes.
#pragma once

#include <vector>

#include "cohort/core/tensor.h"

namespace cohort::autograd {

// The leaves whose .grad a backward of `output` would accumulate into (tensors that require grad
// and have no grad_fn), each once, in the order a depth-first search from output's grad_fn meets
// them (a node's last input first). `output` itself when it is such a leaf; empty when it does not
// require grad. Reads the graph only: no node is made or released.
std::vector<Tensor> graph_leaves(const Tensor& output);

}  // namespace cohort::autograd
