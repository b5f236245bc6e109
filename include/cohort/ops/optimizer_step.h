// The parameter updates of optim's optimizers as ops: in place, without autograd, one pass over a
// parameter where its layout allows (optim/ holds the optimizers' state and options).
//   Tensor buf;                                   // the parameter's momentum buffer, kept by the optimizer
//   sgd_step_(p, p.grad(), buf, /*lr=*/0.1, /*momentum=*/0.9, /*dampening=*/0, /*weight_decay=*/5e-4, false);
#pragma once

#include <vector>

#include "cohort/core/tensor.h"

namespace cohort {

// PyTorch's SGD update of one parameter:
//   d = grad + weight_decay * param
//   when momentum != 0: buf = d on the first step (momentum_buffer undefined: it is created here),
//                       buf = momentum * buf + (1 - dampening) * d after; d = nesterov ? d + momentum * buf : buf
//   param -= lr * d
// momentum_buffer is left alone when momentum is 0. Contiguous float32/float64 tensors of one dtype
// and shape take one fused loop; any other layout the same arithmetic as in-place ops, with the same
// results bit for bit. Throws cohort::Error naming the op when grad's or the buffer's shape differs
// from param's.
void sgd_step_(const Tensor& param, const Tensor& grad, Tensor& momentum_buffer, double lr, double momentum,
               double dampening, double weight_decay, bool nesterov);

// PyTorch's _amp_foreach_non_finite_check_and_unscale_ (the loss scaler's unscale): multiplies every
// gradient by inv_scale in place and returns whether any element was inf or NaN before (an inf stays
// inf, NaN stays NaN). inv_scale == 1 only checks. Contiguous float32 gradients take one fused pass
// each; any other floating dtype or layout is unscaled through a float32 copy with the same result.
// Undefined tensors are skipped; a non-floating tensor is a TypeError.
bool non_finite_check_and_unscale_(const std::vector<Tensor>& grads, float inv_scale);

}  // namespace cohort
