// Gradient clipping, as torch::nn::utils. Parameters whose grad is undefined are skipped.
//
//   loss.backward();
//   double norm = nn::utils::clip_grad_norm_(net->parameters(), /*max_norm=*/1.0);
#pragma once

#include <vector>

#include "cohort/core/tensor.h"

namespace cohort::nn::utils {

// Scales all grads in place by min(1, max_norm / (total_norm + 1e-6)), where total_norm is the
// norm_type-norm of all grads together (norm_type = INFINITY: the largest absolute value), and
// returns total_norm (0 when no parameter has a grad). With error_if_nonfinite, throws when the
// total norm is NaN or infinite instead of scaling.
double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
double clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);

// Clamps all grads in place to [-clip_value, clip_value].
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);
void clip_grad_value_(const Tensor& parameter, double clip_value);

}  // namespace cohort::nn::utils
