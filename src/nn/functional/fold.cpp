// unfold and fold with libtorch's functional options, over cohort::im2col / col2im.
#include "cohort/nn/functional/fold.h"

#include "cohort/ops/fold.h"

namespace cohort::nn::functional {

Tensor unfold(const Tensor& input, const UnfoldFuncOptions& o) {
  return cohort::im2col(input, o.kernel_size(), o.dilation(), o.padding(), o.stride());
}

Tensor fold(const Tensor& input, const FoldFuncOptions& o) {
  return cohort::col2im(input, o.output_size(), o.kernel_size(), o.dilation(), o.padding(), o.stride());
}

}  // namespace cohort::nn::functional
