// Feature (channel) dropout, as ATen's feature_dropout: whole feature maps are zeroed together.
//   Tensor y = cohort::feature_dropout(x, 0.5, /*train=*/true);   // x [N, C, ...]
// In training, each (n, c) slice x[n][c] is kept with probability 1 - p and then scaled by
// 1 / (1 - p), or zeroed whole; otherwise (or with p = 0) the input itself is returned. p = 1 gives
// x * 0. x needs at least 2 dims: dim 0 is the batch, dim 1 the features (ATen's rule; a layer that
// takes unbatched input adds the batch dim first, as nn::Dropout2d does). The mask is drawn from
// `generator` (the default generator when null): one rand of shape [N, C, 1, ...], so under data
// parallelism a replica's samples draw what they draw in the whole batch (Note [Counter-based random
// tensors] in src/ops/random.cpp). Differentiable: the gradient is the same mask times g.
// feature_dropout_ writes into x (not a leaf that requires grad). Throws cohort::Error for p outside
// [0, 1] or fewer than 2 dims; TypeError for a non-floating x.
#pragma once

#include "cohort/core/generator.h"
#include "cohort/core/tensor.h"

namespace cohort {

Tensor feature_dropout(const Tensor& input, double p, bool train, Generator* generator = nullptr);
const Tensor& feature_dropout_(const Tensor& self, double p, bool train, Generator* generator = nullptr);

}  // namespace cohort
