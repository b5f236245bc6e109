// Dropout, as libtorch's free functions:
//   dropout(x, 0.5, is_training())   // each element zeroed with probability p, the rest scaled by 1 / (1 - p)
//   dropout_(x, 0.2, true)           // the same, in place
// With train false or p = 0 the input itself is returned; p = 1 zeroes everything. The mask is drawn
// from `generator` (the default generator when null), uniform per element, so manual_seed repeats it.
// Differentiable w.r.t. the input (the gradient is masked and scaled alike), to any order.
// Throws cohort::Error when p is outside [0, 1], TypeError for a non-floating input in training.
#pragma once

#include "cohort/core/generator.h"
#include "cohort/core/tensor.h"

namespace cohort {

Tensor dropout(const Tensor& input, double p, bool train, Generator* generator = nullptr);
Tensor& dropout_(Tensor& self, double p, bool train, Generator* generator = nullptr);

}  // namespace cohort
