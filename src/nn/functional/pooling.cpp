// max/avg/adaptive 2-d pooling: argument checks, PyTorch's output sizes, and the autograd nodes.
// Kernels: src/ops/cpu/pooling_kernels.h.
#include "cohort/nn/functional/pooling.h"

#include "cohort/autograd/record.h"
#include "cohort/ops/shape.h"
#include "ops/cpu/pooling_kernels.h"
#include "ops/internal.h"

namespace cohort::nn::functional {

AdaptivePool2dFuncOptions::AdaptivePool2dFuncOptions(std::initializer_list<int64_t> hw) {
  COHORT_CHECK(hw.size() == 2, "AdaptivePool2dFuncOptions: expected 2 output sizes, got ", hw.size(), " (",
               IntArrayRef(hw), ")");
  output_size_ = {*hw.begin(), *(hw.begin() + 1)};
}

namespace {

// The input as [N, C, H, W] (adding the batch dim of an unbatched [C, H, W]), after the common checks.
Tensor as_batched(const char* op, const Tensor& input) {
  detail::check_defined(op, input);
  COHORT_CHECK(input.dim() == 3 || input.dim() == 4, op, ": expected a 3-d (unbatched) or 4-d (batched) input ",
               "[N, C, H, W], got input of shape ", input.sizes());
  COHORT_CHECK_AS(TypeError, is_floating_point(input.dtype()), op,
                  ": expected a floating-point input (float32 or float64), got ", input.dtype());
  for (int64_t d = 0; d < input.dim(); ++d)
    COHORT_CHECK(input.size(d) > 0 || (d == 0 && input.dim() == 4), op, ": expected non-empty channel and spatial ",
                 "dims, got input of shape ", input.sizes());
  return input.dim() == 4 ? input : input.unsqueeze(0);
}

Tensor unbatch_like(const Tensor& out, const Tensor& input) { return input.dim() == 4 ? out : out.squeeze(0); }

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Checks one pooling geometry and returns its kernel parameters and output sizes (PyTorch's
// pooling_output_shape: ceil_mode drops a last window that starts in the right padding).
kernel::Pool2dParams geometry(const char* op, const Tensor& x, const Tensor& input, const ExpandingArray<2>& k,
                              const ExpandingArray<2>& s, const ExpandingArray<2>& pad, const ExpandingArray<2>& dil,
                              bool ceil_mode, Shape& out_sizes) {
  kernel::Pool2dParams p;
  out_sizes = {x.size(0), x.size(1), 0, 0};
  for (int d = 0; d < 2; ++d) {
    COHORT_CHECK(k[d] > 0, op, ": kernel_size must be positive, got kernel_size=", k);
    COHORT_CHECK(s[d] > 0, op, ": stride must be positive, got stride=", s);
    COHORT_CHECK(dil[d] > 0, op, ": dilation must be positive, got dilation=", dil);
    COHORT_CHECK(pad[d] >= 0 && pad[d] <= k[d] / 2, op, ": padding should be at most half of kernel_size, got padding=",
                 pad, " and kernel_size=", k);
    const int64_t size = x.size(2 + d), span = dil[d] * (k[d] - 1) + 1;
    COHORT_CHECK(span <= size + 2 * pad[d], op, ": window of kernel_size=", k, " (spanning ", span,
                 ") is larger than the padded input (", size + 2 * pad[d], " = ", size, " + ", 2 * pad[d],
                 " padding in spatial dim ", d, " of input ", input.sizes(), ")");
    int64_t n = floor_div(size + 2 * pad[d] - span + (ceil_mode ? s[d] - 1 : 0), s[d]) + 1;
    if (ceil_mode && (n - 1) * s[d] >= size + pad[d]) --n;
    COHORT_CHECK(n > 0, op, ": output size is too small, got ", n, " for spatial dim ", d, " of input ", input.sizes());
    out_sizes[2 + d] = n;
    p.kernel[d] = k[d], p.stride[d] = s[d], p.padding[d] = pad[d], p.dilation[d] = dil[d];
  }
  return p;
}

std::tuple<Tensor, Tensor> max_pool(const MaxPool2dFuncOptions& o, const Tensor& input, bool want_indices) {
  const char* op = "max_pool2d";
  Tensor x = as_batched(op, input);
  Shape out_sizes;
  const auto p = geometry(op, x, input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode(), out_sizes);
  Tensor out = detail::make_empty(out_sizes, x.dtype(), x.device());
  Tensor saved = kernel::max_pool2d_forward(out, x, p);  // the argmax indices
  out = autograd::record("MaxPool2DWithIndicesBackward0", out, {x},
                         [=, x_sizes = x.sizes().vec()](const Tensor& g) {
    Tensor dx = detail::make_empty(x_sizes, g.dtype(), g.device());
    kernel::max_pool2d_backward(dx, g, saved);
    return std::vector<Tensor>{dx};
  });
  return {unbatch_like(out, input), want_indices ? unbatch_like(saved, input) : Tensor()};
}

// Output size of an adaptive pool: the given sizes, nullopt keeping the input's.
Shape adaptive_sizes(const char* op, const Tensor& x, const Tensor& input, const AdaptivePool2dFuncOptions& o) {
  Shape out_sizes{x.size(0), x.size(1), 0, 0};
  for (int d = 0; d < 2; ++d) {
    const auto& s = o.output_size()[d];
    out_sizes[2 + d] = s ? *s : x.size(2 + d);
    COHORT_CHECK(out_sizes[2 + d] > 0, op, ": output_size must be positive, got ", out_sizes[2 + d],
                 " for spatial dim ", d, " of input ", input.sizes());
  }
  return out_sizes;
}

}  // namespace

Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& options) {
  return std::get<0>(max_pool(options, input, false));
}

std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, const MaxPool2dFuncOptions& options) {
  return max_pool(options, input, true);
}

Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& o) {
  const char* op = "avg_pool2d";
  Tensor x = as_batched(op, input);
  Shape out_sizes;
  auto p = geometry(op, x, input, o.kernel_size(), o.stride(), o.padding(), 1, o.ceil_mode(), out_sizes);
  p.count_include_pad = o.count_include_pad();
  Tensor out = detail::make_empty(out_sizes, x.dtype(), x.device());
  kernel::avg_pool2d_forward(out, x, p);
  out = autograd::record("AvgPool2DBackward0", out, {x}, [=, x_sizes = x.sizes().vec()](const Tensor& g) {
    Tensor dx = detail::make_empty(x_sizes, g.dtype(), g.device());
    kernel::avg_pool2d_backward(dx, g, p);
    return std::vector<Tensor>{dx};
  });
  return unbatch_like(out, input);
}

Tensor adaptive_avg_pool2d(const Tensor& input, const AdaptiveAvgPool2dFuncOptions& options) {
  const char* op = "adaptive_avg_pool2d";
  Tensor x = as_batched(op, input);
  Tensor out = detail::make_empty(adaptive_sizes(op, x, input, options), x.dtype(), x.device());
  kernel::adaptive_avg_pool2d_forward(out, x);
  out = autograd::record("AdaptiveAvgPool2DBackward0", out, {x}, [x_sizes = x.sizes().vec()](const Tensor& g) {
    Tensor dx = detail::make_empty(x_sizes, g.dtype(), g.device());
    kernel::adaptive_avg_pool2d_backward(dx, g);
    return std::vector<Tensor>{dx};
  });
  return unbatch_like(out, input);
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d_with_indices(const Tensor& input,
                                                            const AdaptiveMaxPool2dFuncOptions& options) {
  const char* op = "adaptive_max_pool2d";
  Tensor x = as_batched(op, input);
  const Shape out_sizes = adaptive_sizes(op, x, input, options);
  Tensor out = detail::make_empty(out_sizes, x.dtype(), x.device());
  Tensor indices = detail::make_empty(out_sizes, kInt64, x.device());
  kernel::adaptive_max_pool2d_forward(out, indices, x);
  out = autograd::record("AdaptiveMaxPool2DBackward0", out, {x},
                         [indices, x_sizes = x.sizes().vec()](const Tensor& g) {
    Tensor dx = detail::make_empty(x_sizes, g.dtype(), g.device());
    kernel::max_pool2d_backward(dx, g, indices);
    return std::vector<Tensor>{dx};
  });
  return {unbatch_like(out, input), unbatch_like(indices, input)};
}

Tensor adaptive_max_pool2d(const Tensor& input, const AdaptiveMaxPool2dFuncOptions& options) {
  return std::get<0>(adaptive_max_pool2d_with_indices(input, options));
}

}  // namespace cohort::nn::functional
