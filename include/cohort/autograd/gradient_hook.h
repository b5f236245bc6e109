// The gradients of several tensors, seen together in one call (the node PyTorch's module backward
// hooks are built on, torch.utils.hooks.BackwardHookFunction):
//
//   std::vector<Tensor> seen = autograd::hook_gradients({a, b}, [](const std::vector<Tensor>& grads) {
//     return std::vector<Tensor>{grads[0] * 2, grads[1]};  // or {} to leave them as they are
//   });
//   // compute with seen[0] and seen[1] in place of a and b
//
// hook_gradients returns aliases of `tensors` (the same values and storage) whose backward is one
// node. That node waits for the gradient of every alias that receives one, calls `hook` once with
// one gradient per tensor (an undefined Tensor for a tensor that got none or does not require
// grad), and hands on what `hook` returns instead: one gradient per tensor (undefined: none), or an
// empty vector to pass them through. A tensor that does not require grad is returned as it is. With
// grad mode off, or no tensor requiring grad, the tensors are returned and `hook` is never called.
// A hook that returns the wrong number of gradients, or one of another shape, is an AutogradError.
#pragma once

#include <functional>
#include <vector>

#include "cohort/core/tensor.h"

namespace cohort::autograd {

using GradientsHook = std::function<std::vector<Tensor>(const std::vector<Tensor>& grads)>;

// `name` names the node (autograd graphs, anomaly messages, profiles).
std::vector<Tensor> hook_gradients(const std::vector<Tensor>& tensors, GradientsHook hook,
                                   const char* name = "BackwardHookFunctionBackward");

}  // namespace cohort::autograd
