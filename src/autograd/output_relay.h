// The grad_fn of one output of a node that has several (a custom function's, a gradient hook's): the
// engine's nodes have one output, so each output's relay parks its gradient in the target's slot
// (Target::deliver) and passes on a 0-d zero, and the engine runs the target once every relay that
// received a gradient in the pass has run (Note [Custom function nodes] in custom_function.cpp).
#pragma once

#include <memory>
#include <vector>

#include "cohort/autograd/node.h"
#include "cohort/ops/creation.h"

namespace cohort::autograd::detail {

template <class Target>
class OutputRelay : public Node {
 public:
  OutputRelay(const std::shared_ptr<Target>& target, size_t index)
      : Node(target->name(), {target}, target->device()), target_(target.get()), index_(index) {}
  std::vector<Tensor> apply(Tensor grad_output) override {
    const TensorOptions options = TensorOptions(grad_output.dtype()).device(grad_output.device());
    target_->deliver(index_, std::move(grad_output));
    return {zeros({}, options)};
  }

 private:
  Target* target_;  // kept alive by next_functions()
  size_t index_;
};

}  // namespace cohort::autograd::detail
