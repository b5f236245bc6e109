// The two kinds of node: an op's backward (a function kept until the graph is released) and the
// accumulation of a leaf's gradient into its .grad().
#pragma once

#include "cohort/autograd/node.h"
#include "cohort/autograd/record.h"

namespace cohort::autograd {

class FunctionNode : public Node {
 public:
  // input_sizes: the shape of each input, which its gradient must have.
  FunctionNode(std::string name, std::vector<std::shared_ptr<Node>> next, Device device, BackwardFn fn,
               std::vector<Shape> input_sizes)
      : Node(std::move(name), std::move(next), device), fn_(std::move(fn)), input_sizes_(std::move(input_sizes)) {}
  std::vector<Tensor> apply(Tensor grad_output) override;
  void release() override { fn_ = nullptr; }

 private:
  BackwardFn fn_;
  std::vector<Shape> input_sizes_;
};

class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(std::shared_ptr<TensorImpl> variable);
  std::vector<Tensor> apply(Tensor grad_output) override;
  const std::shared_ptr<TensorImpl>& variable() const { return variable_; }

 private:
  std::shared_ptr<TensorImpl> variable_;  // the leaf (which holds this node only weakly)
};

}  // namespace cohort::autograd
