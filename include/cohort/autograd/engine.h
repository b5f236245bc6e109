// The backward engine's entry points. Tensor::backward() calls autograd::backward.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "cohort/core/tensor.h"

namespace cohort::autograd {

// Accumulates d(sum of outputs . grad_outputs)/d(leaf) into every leaf's .grad(). A grad_output may
// be undefined for a one-element output (it is then 1). retain_graph defaults to create_graph.
void backward(const std::vector<Tensor>& outputs, const std::vector<Tensor>& grad_outputs = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false);

// Gradients of outputs w.r.t. inputs, returned instead of accumulated into .grad().
// allow_unused: an input the outputs do not depend on gives an undefined tensor instead of an error.
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {},
                         std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                         bool allow_unused = false);

// Runs `callback` on the calling thread once the backward pass in progress has finished
// (DataParallel and DDP use it to finish gradient reductions). Throws outside a backward pass.
void queue_callback(std::function<void()> callback);

}  // namespace cohort::autograd
