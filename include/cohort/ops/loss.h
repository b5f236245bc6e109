// The negative log-likelihood loss over class indices, as libtorch's free function:
//   nll_loss(log_softmax(logits, 1), target)                        // the mean over samples
//   nll_loss(logp, target, class_weights, kSum, /*ignore_index=*/0)
// input: log-probabilities [N, C], [N, C, d1, ...] or a single sample [C], floating point; target:
// int64 (or int32) class indices of input's shape without the class dim. weight: [C] or undefined
// (every class weighs 1). A sample whose target is ignore_index weighs 0. Per sample the loss is
// -weight[t] * input[i, t]; kMean divides their sum by the summed weights of the samples counted (all
// ignored: 0 / 0, NaN, as in PyTorch). Differentiable w.r.t. input (node "NllLossBackward0"; its
// backward is linear in the incoming gradient, so create_graph works; no second derivative).
// Throws IndexError naming the sample for a target outside [0, C) that is not ignore_index, Error
// for shapes that do not match and for class weights that require grad (the loss is not
// differentiable in them), TypeError for a non-integer target or a non-floating input.
#pragma once

#include "cohort/core/tensor.h"
#include "cohort/ops/reduction_mode.h"

namespace cohort {

Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight = {}, Reduction reduction = kMean,
                int64_t ignore_index = -100);

}  // namespace cohort
