// The parameter updates of optim's optimizers as ops: in place, without autograd, one pass over a
// parameter where its layout allows (optim/ holds the optimizers' state and options).
//   Tensor buf;                                   // the parameter's momentum buffer, kept by the optimizer
//   sgd_step_(p, p.grad(), buf, /*lr=*/0.1, /*momentum=*/0.9, /*dampening=*/0, /*weight_decay=*/5e-4, false);
#pragma once

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

}  // namespace cohort
