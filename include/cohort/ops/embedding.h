// Embedding lookup, as libtorch's free function (note its argument order: weight first):
//   embedding(weight, tokens)                   // weight [V, D], tokens int64/int32 [*] -> [*, D]
//   embedding(weight, tokens, /*padding_idx=*/0)
// Differentiable w.r.t. weight (node "EmbeddingBackward0", a scatter-add of the output gradient);
// the padding_idx row gets no gradient (a negative padding_idx means none, as in libtorch). With
// scale_grad_by_freq, each row's gradient is divided by the number of times its index occurs in
// `indices`. sparse=true is refused: cohort has no sparse tensors.
// Throws IndexError naming the first index outside [0, V) and its position, Error for a weight that
// is not 2-d or a padding_idx >= V, TypeError for non-integer indices.
#pragma once

#include "cohort/core/tensor.h"

namespace cohort {

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1,
                 bool scale_grad_by_freq = false, bool sparse = false);

}  // namespace cohort
