// max/avg/adaptive 2-d pooling with libtorch's functional options, over the ops of
// cohort/ops/pooling.h.
#include "cohort/nn/functional/pooling.h"

#include "cohort/ops/pooling.h"

namespace cohort::nn::functional {

AdaptivePool2dFuncOptions::AdaptivePool2dFuncOptions(std::initializer_list<int64_t> hw) {
  COHORT_CHECK(hw.size() == 2, "AdaptivePool2dFuncOptions: expected 2 output sizes, got ", hw.size(), " (",
               IntArrayRef(hw), ")");
  output_size_ = {*hw.begin(), *(hw.begin() + 1)};
}

namespace {

// The output size with PyTorch's None (nullopt) replaced by the input's size; an input of the wrong
// rank gets 0, which the op reports after the rank.
std::array<int64_t, 2> output_size(const Tensor& input, const AdaptivePool2dFuncOptions& o) {
  std::array<int64_t, 2> size{};
  for (int d = 0; d < 2; ++d) {
    const auto& s = o.output_size()[d];
    size[d] = s ? *s : (input.defined() && input.dim() >= 2 ? input.size(input.dim() - 2 + d) : 0);
  }
  return size;
}

}  // namespace

Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& o) {
  return cohort::max_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const MaxPool2dFuncOptions& o) {
  return cohort::max_pool2d_with_indices(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& o) {
  return cohort::avg_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad());
}

Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& options) {
  const auto size = output_size(input, options);
  return cohort::adaptive_avg_pool2d(input, IntArrayRef(size.data(), size.size()));
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool2dFuncOptions& options) {
  const auto size = output_size(input, options);
  return cohort::adaptive_max_pool2d(input, IntArrayRef(size.data(), size.size()));
}

Tensor adaptive_max_pool2d(const Tensor& input, const AdaptiveMaxPool2dFuncOptions& options) {
  return std::get<0>(adaptive_max_pool2d_with_indices(input, options));
}

}  // namespace cohort::nn::functional
