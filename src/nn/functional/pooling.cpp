// max/avg/adaptive 1-, 2- and 3-d pooling with libtorch's functional options, over the ops of
// cohort/ops/pooling.h.
#include "cohort/nn/functional/pooling.h"

#include "cohort/ops/pooling.h"

namespace cohort::nn::functional {

AdaptivePool2dFuncOptions::AdaptivePool2dFuncOptions(std::initializer_list<int64_t> hw) {
  COHORT_CHECK(hw.size() == 2, "AdaptivePool2dFuncOptions: expected 2 output sizes, got ", hw.size(), " (",
               IntArrayRef(hw), ")");
  output_size_ = {*hw.begin(), *(hw.begin() + 1)};
}

AdaptivePool3dFuncOptions::AdaptivePool3dFuncOptions(std::initializer_list<int64_t> dhw) {
  COHORT_CHECK(dhw.size() == 3, "AdaptivePool3dFuncOptions: expected 3 output sizes, got ", dhw.size(), " (",
               IntArrayRef(dhw), ")");
  output_size_ = {*dhw.begin(), *(dhw.begin() + 1), *(dhw.begin() + 2)};
}

namespace {

// The output size with PyTorch's None (nullopt) replaced by the input's size; an input of the wrong
// rank gets 0, which the op reports after the rank.
template <size_t D>
std::array<int64_t, D> resolve(const Tensor& input, const std::array<std::optional<int64_t>, D>& sizes) {
  std::array<int64_t, D> size{};
  for (size_t d = 0; d < D; ++d) {
    const auto& s = sizes[d];
    const int64_t dim = static_cast<int64_t>(d) - static_cast<int64_t>(D);
    size[d] = s ? *s : (input.defined() && input.dim() >= static_cast<int64_t>(D) ? input.size(dim) : 0);
  }
  return size;
}
std::array<int64_t, 2> output_size(const Tensor& input, const AdaptivePool2dFuncOptions& o) {
  return resolve<2>(input, o.output_size());
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

Tensor max_pool1d(const Tensor& input, const MaxPool1dFuncOptions& o) {
  return cohort::max_pool1d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, const MaxPool1dFuncOptions& o) {
  return cohort::max_pool1d_with_indices(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}
Tensor avg_pool1d(const Tensor& input, const AvgPool1dFuncOptions& o) {
  return cohort::avg_pool1d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad());
}
Tensor adaptive_avg_pool1d(const Tensor& input, const AdaptiveAvgPool1dFuncOptions& o) {
  return cohort::adaptive_avg_pool1d(input, o.output_size());
}
std::tuple<Tensor, Tensor> adaptive_max_pool1d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool1dFuncOptions& o) {
  return cohort::adaptive_max_pool1d(input, o.output_size());
}
Tensor adaptive_max_pool1d(const Tensor& input, const AdaptiveMaxPool1dFuncOptions& o) {
  return std::get<0>(adaptive_max_pool1d_with_indices(input, o));
}

Tensor max_pool3d(const Tensor& input, const MaxPool3dFuncOptions& o) {
  return cohort::max_pool3d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}
std::tuple<Tensor, Tensor> max_pool3d_with_indices(const Tensor& input, const MaxPool3dFuncOptions& o) {
  return cohort::max_pool3d_with_indices(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}
Tensor avg_pool3d(const Tensor& input, const AvgPool3dFuncOptions& o) {
  return cohort::avg_pool3d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(), o.count_include_pad());
}
Tensor adaptive_avg_pool3d(const Tensor& input, const AdaptiveAvgPool3dFuncOptions& o) {
  const auto size = resolve<3>(input, o.output_size());
  return cohort::adaptive_avg_pool3d(input, IntArrayRef(size.data(), size.size()));
}
std::tuple<Tensor, Tensor> adaptive_max_pool3d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool3dFuncOptions& o) {
  const auto size = resolve<3>(input, o.output_size());
  return cohort::adaptive_max_pool3d(input, IntArrayRef(size.data(), size.size()));
}
Tensor adaptive_max_pool3d(const Tensor& input, const AdaptiveMaxPool3dFuncOptions& o) {
  return std::get<0>(adaptive_max_pool3d_with_indices(input, o));
}

}  // namespace cohort::nn::functional
