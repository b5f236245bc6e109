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

// The other losses, as libtorch's free functions (ATen's argument order), composed of tensor ops so
// that they differentiate to any order. nn::functional and the nn loss modules call these.
//
// The elementwise losses take an input and a target of the same shape: unlike PyTorch, which
// broadcasts them (a classic silent bug: [N, 1] against [N] gives N x N terms), different shapes
// are an error with the fix.
//   mse_loss:       (x - y)^2
//   l1_loss:        |x - y|
//   smooth_l1_loss: 0.5 d^2 / beta where d = |x - y| < beta, else d - 0.5 beta (beta >= 0; 0 is l1)
//   huber_loss:     0.5 d^2 where d < delta, else delta (d - 0.5 delta) (delta > 0)
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean);
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean);
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean, double beta = 1.0);
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean, double delta = 1.0);

// log_softmax over the class dim (1, or 0 for a single sample [C]) and nll_loss. target: int64 class
// indices [N, ...] (ignore_index weighs 0), or class probabilities of input's shape. label_smoothing
// in [0, 1] mixes in the uniform distribution, as PyTorch does.
Tensor cross_entropy_loss(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                          Reduction reduction = kMean, int64_t ignore_index = -100, double label_smoothing = 0.0);

// input: probabilities in [0, 1] (an error otherwise, naming the fix); logs are clamped at -100 as in
// PyTorch. weight broadcasts to the input.
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                            Reduction reduction = kMean);
// input: logits, computed stably; pos_weight broadcasts over the last dim (classes).
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                                        const Tensor& pos_weight = {}, Reduction reduction = kMean);

// More elementwise losses, same-shape operands (target: +1 / -1 labels where named):
//   kl_div:                target (log target - input), 0 where target is 0; with log_target the
//                          target is given as its log. (F::kl_div adds kBatchMean, the sum over N.)
//   soft_margin_loss:      log(1 + exp(-target input))
//   margin_ranking_loss:   max(0, -target (input1 - input2) + margin)
//   hinge_embedding_loss:  input where target is 1, max(0, margin - input) where it is -1
//   cosine_embedding_loss: per row of [N, D] (or [D]) inputs and a [N] (or []) target: 1 - cos where
//                          target is 1, max(0, cos - margin) where it is -1
//   poisson_nll_loss:      exp(input) - target input (log_input), else input - target log(input + eps);
//                          full adds Stirling's log(target!) where target > 1
Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction = kMean, bool log_target = false);
Tensor soft_margin_loss(const Tensor& input, const Tensor& target, Reduction reduction = kMean);
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin = 0.0,
                           Reduction reduction = kMean);
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin = 1.0,
                            Reduction reduction = kMean);
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target, double margin = 0.0,
                             Reduction reduction = kMean);
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input = true, bool full = false,
                        double eps = 1e-8, Reduction reduction = kMean);

}  // namespace cohort
