// batch_norm with libtorch's functional arguments (running statistics first, momentum nullopt for
// the module's cumulative average), over cohort::batch_norm.
#include "cohort/nn/functional/batchnorm.h"

#include "cohort/ops/normalization.h"

namespace cohort::nn::functional {

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, std::optional<double> momentum, double eps) {
  COHORT_CHECK(!training || !running_mean.defined() || momentum.has_value(),
               "batch_norm: momentum=nullopt (a cumulative average) needs a momentum value here; hint: the module "
               "passes 1 / num_batches_tracked");
  return cohort::batch_norm(input, weight, bias, running_mean, running_var, training, momentum.value_or(0.0), eps);
}

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const BatchNormFuncOptions& o) {
  return batch_norm(input, running_mean, running_var, o.weight(), o.bias(), o.training(), o.momentum(), o.eps());
}

}  // namespace cohort::nn::functional
