// conv1d, conv2d and conv3d: argument checks, padding modes, and the one differentiable primitive (a
// 2-d convolution on [N, C, H, W]; conv1d runs it with H = 1, conv3d is composed of it in
// convolution3d.cpp); conv_transpose1d/2d/3d, which are that convolution's input gradient. Kernels:
// ops/cpu/conv_kernels.h.
#include "cohort/ops/convolution.h"

#include <memory>
#include <string>
#include <utility>

#include "cohort/autograd/grad_mode.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"
#include "ops/cpu/conv_kernels.h"
#include "ops/cpu/conv_workspace.h"
#include "ops/convolution_internal.h"
#include "ops/internal.h"
#include "cohort/autograd/trace.h"
#include "ops/autocast_casts.h"

namespace cohort {

using autograd::SavedTensor;
using namespace detail::conv;

namespace {

Tensor convolution(const Tensor& x, const Tensor& w, const Tensor& b, const kernel::Conv2dParams& p);

// Note [Convolution double backward]
// The two halves of a convolution's backward are convolutions again, and each is linear in both of
// its arguments: dx = input_grad(g, w) and dw = weight_grad(g, x). Their own backward (given gg, the
// gradient w.r.t. their result) is therefore made of the same three primitives:
//   input_grad(g, w):  d/dg = conv(gg, w),  d/dw = weight_grad(g, gg)   (gg plays the input)
//   weight_grad(g, x): d/dg = conv(x, gg),  d/dx = input_grad(g, gg)    (gg plays the weight)
// so with create_graph a convolution is differentiable to any order. Without it, the backward is
// one kernel call computing both halves (their shared work on g is done once).
Tensor input_grad(const Tensor& g, const Tensor& w, const Shape& x_sizes, const kernel::Conv2dParams& p);
Tensor weight_grad(const Tensor& g, const Tensor& x, const Shape& w_sizes, const kernel::Conv2dParams& p);

Tensor input_grad(const Tensor& g, const Tensor& w, const Shape& x_sizes, const kernel::Conv2dParams& p) {
  Tensor dx = detail::make_empty(x_sizes, g.dtype(), g.device());
  kernel::conv2d_backward(dx, Tensor(), Tensor(), g, Tensor(), w, p);
  const bool g_grad = g.requires_grad(), w_grad = w.requires_grad();
  return autograd::record("ConvolutionBackwardBackward0", dx, {g, w},
                          [=, sg = SavedTensor(w_grad ? g : Tensor()), sw = SavedTensor(g_grad ? w : Tensor()),
                           w_sizes = w.sizes().vec()](const Tensor& gg) {
    return std::vector<Tensor>{g_grad ? convolution(gg, sw.unpack(), Tensor(), p) : Tensor(),
                               w_grad ? weight_grad(sg.unpack(), gg, w_sizes, p) : Tensor()};
  });
}

Tensor weight_grad(const Tensor& g, const Tensor& x, const Shape& w_sizes, const kernel::Conv2dParams& p) {
  Tensor dw = detail::make_empty(w_sizes, g.dtype(), g.device());
  kernel::conv2d_backward(Tensor(), dw, Tensor(), g, x, Tensor(), p);
  const bool g_grad = g.requires_grad(), x_grad = x.requires_grad();
  return autograd::record("ConvolutionBackwardBackward0", dw, {g, x},
                          [=, sg = SavedTensor(x_grad ? g : Tensor()), sx = SavedTensor(g_grad ? x : Tensor()),
                           x_sizes = x.sizes().vec()](const Tensor& gg) {
    return std::vector<Tensor>{g_grad ? convolution(sx.unpack(), gg, Tensor(), p) : Tensor(),
                               x_grad ? input_grad(sg.unpack(), gg, x_sizes, p) : Tensor()};
  });
}

// The primitive: x [N, C, H, W], w [O, C / groups, kH, kW], b [O] or undefined, all checked.
Tensor convolution(const Tensor& x, const Tensor& w, const Tensor& b, const kernel::Conv2dParams& p) {
  Shape out_sizes{x.size(0), w.size(0), 0, 0};
  for (int d = 0; d < 2; ++d)
    out_sizes[2 + d] = (x.size(2 + d) + p.pad_lo[d] + p.pad_hi[d] - p.dilation[d] * (w.size(2 + d) - 1) - 1) /
                           p.stride[d] + 1;
  Tensor out = detail::make_empty(out_sizes, x.dtype(), x.device());
  const bool x_grad = x.requires_grad(), w_grad = w.requires_grad(), b_grad = b.defined() && b.requires_grad();
  // The weight gradient reads the input as the forward reordered it (Note [Kept convolution input]
  // in dnnl/conv.cpp); the slot is emptied by the backward that uses it.
  auto kept = std::make_shared<std::shared_ptr<kernel::KeptConvInput>>();
  if (w_grad && x.dtype() == kBFloat16 && GradMode::is_enabled())
    *kept = kernel::conv2d_forward_keeping_input(out, x, w, b, p);
  else
    kernel::conv2d_forward(out, x, w, b, p);
  return autograd::record("ConvolutionBackward0", out, {x, w, b},
                          [=, sx = SavedTensor(w_grad ? x : Tensor()), sw = SavedTensor(x_grad ? w : Tensor()),
                           x_sizes = x.sizes().vec(), w_sizes = w.sizes().vec()](const Tensor& g) {
    const std::shared_ptr<kernel::KeptConvInput> kept_input = std::exchange(*kept, nullptr);
    if (GradMode::is_enabled())  // create_graph: Note [Convolution double backward]
      return std::vector<Tensor>{x_grad ? input_grad(g, sw.unpack(), x_sizes, p) : Tensor(),
                                 w_grad ? weight_grad(g, sx.unpack(), w_sizes, p) : Tensor(),
                                 b_grad ? sum(g, {0, 2, 3}) : Tensor()};
    Tensor dx, dw, db;
    if (x_grad) dx = detail::make_empty(x_sizes, g.dtype(), g.device());
    if (w_grad) {
      dw = detail::make_empty(w_sizes, g.dtype(), g.device());
      if (b_grad) db = detail::make_empty({w_sizes[0]}, g.dtype(), g.device());
    }
    if (x_grad || w_grad) kernel::conv2d_backward(dx, dw, db, g, sx.unpack(), sw.unpack(), p, kept_input);
    if (b_grad && !w_grad) db = sum(g, {0, 2, 3});
    return std::vector<Tensor>{dx, dw, db};
  });
}

// Note [Transposed convolution]
// conv_transpose(x, w) is the gradient w.r.t. the input of conv(., w) taken at an output gradient x:
// x [N, C_in, H, W] plays dout, w [C_in, C_out / groups, kH, kW] is the convolution's weight as is
// (its O is C_in), and the result [N, C_out, H', W'] plays din. So the forward is the backward-data
// kernel and the backward is the other two primitives: d/dx = conv(g, w), d/dw = weight_grad(x, g)
// (Note [Convolution double backward]), each differentiable again under create_graph.
// output_padding adds rows at the end of din that the convolution's geometry must still explain:
// p.pad_hi = padding - output_padding makes (H' + pad_lo + pad_hi - span) / stride + 1 = H exact
// (the same padding_r PyTorch hands oneDNN). pad_hi may be negative: the convolution then never
// reads the last rows, whose din is zero, as the transposed convolution's definition gives.
Tensor transposed_convolution(const Tensor& x, const Tensor& w, const Tensor& b, const Shape& out_sizes,
                              const kernel::Conv2dParams& p) {
  Tensor out = detail::make_empty(out_sizes, x.dtype(), x.device());
  kernel::conv2d_backward(out, Tensor(), Tensor(), x, Tensor(), w, p);
  if (b.defined()) {
    NoGradGuard no_grad;
    out.add_(b.view({1, b.size(0), 1, 1}));
  }
  const bool x_grad = x.requires_grad(), w_grad = w.requires_grad(), b_grad = b.defined() && b.requires_grad();
  return autograd::record("ConvolutionBackward0", out, {x, w, b},
                          [=, sx = SavedTensor(w_grad ? x : Tensor()), sw = SavedTensor(x_grad ? w : Tensor()),
                           w_sizes = w.sizes().vec()](const Tensor& g) {
    return std::vector<Tensor>{x_grad ? convolution(g, sw.unpack(), Tensor(), p) : Tensor(),
                               w_grad ? weight_grad(sx.unpack(), g, w_sizes, p) : Tensor(),
                               b_grad ? sum(g, {0, 2, 3}) : Tensor()};
  });
}

// [N, C, H, W] params from a D-d geometry: conv1d's one dim is W (H is 1, stride 1, no padding).
template <size_t D>
kernel::Conv2dParams params_2d(const ExpandingArray<D>& stride, const std::array<int64_t, D>& lo,
                               const std::array<int64_t, D>& hi, const ExpandingArray<D>& dilation, int64_t groups) {
  kernel::Conv2dParams p;
  p.groups = groups;
  for (size_t d = 0; d < D; ++d) {
    const size_t k = d + 2 - D;  // D is 1 or 2
    p.stride[k] = stride[d], p.dilation[k] = dilation[d], p.pad_lo[k] = lo[d], p.pad_hi[k] = hi[d];
  }
  return p;
}

// Checks the arguments of conv1d/conv2d (op names which), resolves the padding (`sizes` when mode is
// Explicit), and runs the primitive on 4-d views.
template <size_t D>
Tensor conv_nd(const char* op, const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride_arg,
               PaddingMode mode, IntArrayRef sizes, IntArrayRef dilation_arg, int64_t groups) {
  trace::OpScope trace(op);
  check_tensors<D>(op, input, weight, bias, "out_channels, in_channels / groups");
  constexpr int64_t kDim = static_cast<int64_t>(D);
  const auto stride = detail::expand_param<D>(op, "stride", stride_arg);
  const auto dilation = detail::expand_param<D>(op, "dilation", dilation_arg);
  check_geometry<D>(op, stride, dilation, groups);
  const bool batched = input.dim() == kDim + 2;
  const int64_t channels = input.size(batched ? 1 : 0);
  COHORT_CHECK(weight.size(0) % groups == 0, op, ": out_channels (weight.size(0) = ", weight.size(0),
               ") must be divisible by groups=", groups, ", got weight of shape ", weight.sizes());
  COHORT_CHECK(channels == weight.size(1) * groups, op, ": expected input of shape ", input.sizes(), " to have ",
               weight.size(1) * groups, " channels (weight ", weight.sizes(), " takes ", weight.size(1),
               " per group, times groups=", groups, "), got ", channels, " channels");
  COHORT_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == weight.size(0)), op,
               ": expected a 1-d bias of ", weight.size(0), " elements (weight ", weight.sizes(), "), got bias of shape ",
               bias.sizes());

  // Padding per side; "same" pads dilation * (k - 1) in total, the odd one at the end (as PyTorch).
  std::array<int64_t, D> lo{}, hi{};
  if (mode == PaddingMode::Same) {
    for (size_t d = 0; d < D; ++d)
      COHORT_CHECK(stride[d] == 1, op, ": padding=same needs stride 1, got stride=", stride,
                   " (PyTorch refuses strided 'same' convolutions too); hint: give the padding as numbers");
    for (size_t d = 0; d < D; ++d) {
      const int64_t total = dilation[d] * (weight.size(2 + d) - 1);
      lo[d] = total / 2;
      hi[d] = total - lo[d];
    }
  } else if (mode == PaddingMode::Explicit) {
    const auto padding = detail::expand_param<D>(op, "padding", sizes);
    for (size_t d = 0; d < D; ++d) {
      COHORT_CHECK(padding[d] >= 0, op, ": padding must be non-negative, got padding=", padding);
      lo[d] = hi[d] = padding[d];
    }
  }
  for (size_t d = 0; d < D; ++d) {
    const int64_t size = input.size(input.dim() - kDim + static_cast<int64_t>(d)), k = weight.size(2 + d);
    const int64_t padded = size + lo[d] + hi[d], span = dilation[d] * (k - 1) + 1;
    COHORT_CHECK(span <= padded, op, ": kernel of weight ", weight.sizes(), " (spanning ", span,
                 " with dilation=", dilation, ") is larger than the padded input (", padded, " = ", size, " + ",
                 lo[d] + hi[d], " padding in spatial dim ", d, " of input ", input.sizes(), ")");
  }

  // To [N, C, H, W]: add the batch dim, and for conv1d an H of 1; conv3d is composed of a conv2d.
  Tensor x = batched ? input : input.unsqueeze(0), w = weight, out;
  if constexpr (D == 3) {
    out = conv3d_as_conv2d(x, w, bias, stride, lo, hi, dilation, groups);
  } else {
    const kernel::Conv2dParams p = params_2d<D>(stride, lo, hi, dilation, groups);
    if (D == 1) x = x.unsqueeze(2), w = w.unsqueeze(2);
    out = convolution(x, w, bias, p);
    if (D == 1) out = out.squeeze(2);
  }
  if (!batched) out = out.squeeze(0);
  if (trace) {
    std::vector<int64_t> pads = trace::ints(lo);
    pads.insert(pads.end(), hi.begin(), hi.end());
    trace.record({input, weight, bias}, out, {{"strides", trace::ints(stride)}, {"pads", pads},
                 {"dilations", trace::ints(dilation)}, {"groups", groups}});
  }
  return out;
}

// Checks the arguments of conv_transpose1d/2d and runs the transposed primitive on 4-d views.
template <size_t D>
Tensor conv_transpose_nd(const char* op, const Tensor& input, const Tensor& weight, const Tensor& bias,
                         IntArrayRef stride_arg, IntArrayRef padding_arg, IntArrayRef output_padding_arg,
                         int64_t groups, IntArrayRef dilation_arg) {
  check_tensors<D>(op, input, weight, bias, "in_channels, out_channels / groups");
  constexpr int64_t kDim = static_cast<int64_t>(D);
  const auto stride = detail::expand_param<D>(op, "stride", stride_arg);
  const auto padding = detail::expand_param<D>(op, "padding", padding_arg);
  const auto output_padding = detail::expand_param<D>(op, "output_padding", output_padding_arg);
  const auto dilation = detail::expand_param<D>(op, "dilation", dilation_arg);
  check_geometry<D>(op, stride, dilation, groups);
  for (size_t d = 0; d < D; ++d) {
    COHORT_CHECK(padding[d] >= 0, op, ": padding must be non-negative, got padding=", padding);
    COHORT_CHECK(output_padding[d] >= 0, op, ": output_padding must be non-negative, got output_padding=",
                 output_padding);
    COHORT_CHECK(output_padding[d] < stride[d] || output_padding[d] < dilation[d], op,
                 ": output_padding must be smaller than either stride or dilation, got output_padding=",
                 output_padding, ", stride=", stride, ", dilation=", dilation);
  }
  const bool batched = input.dim() == kDim + 2;
  const int64_t channels = input.size(batched ? 1 : 0);
  COHORT_CHECK(weight.size(0) % groups == 0, op, ": in_channels (weight.size(0) = ", weight.size(0),
               ") must be divisible by groups=", groups, ", got weight of shape ", weight.sizes());
  COHORT_CHECK(channels == weight.size(0), op, ": expected input of shape ", input.sizes(), " to have ",
               weight.size(0), " channels (weight ", weight.sizes(), " is [in_channels, out_channels / groups, ",
               kernel_letters(D), "]), got ", channels, " channels");
  const int64_t out_channels = weight.size(1) * groups;
  COHORT_CHECK(!bias.defined() || (bias.dim() == 1 && bias.size(0) == out_channels), op, ": expected a 1-d bias of ",
               out_channels, " elements (weight ", weight.sizes(), " times groups=", groups, "), got bias of shape ",
               bias.sizes());

  // Output size per spatial dim, and the convolution geometry it is the input of (Note [Transposed
  // convolution]).
  Shape out_sizes{batched ? input.size(0) : 1, out_channels};
  if (D == 1) out_sizes.push_back(1);  // the 2-d primitive's H
  std::array<int64_t, D> lo{}, hi{};
  for (size_t d = 0; d < D; ++d) {
    const int64_t size = input.size(input.dim() - kDim + static_cast<int64_t>(d)), k = weight.size(2 + d);
    const int64_t out = (size - 1) * stride[d] - 2 * padding[d] + dilation[d] * (k - 1) + output_padding[d] + 1;
    COHORT_CHECK(out > 0, op, ": the output would have size ", out, " in spatial dim ", d, " = (", size, " - 1) * ",
                 stride[d], " - 2 * ", padding[d], " + ", dilation[d], " * (", k, " - 1) + ", output_padding[d],
                 " + 1 (input ", input.sizes(), ", weight ", weight.sizes(), "); hint: reduce the padding");
    out_sizes.push_back(out);
    lo[d] = padding[d];
    hi[d] = padding[d] - output_padding[d];
  }
  Tensor x = batched ? input : input.unsqueeze(0), w = weight, out;
  if constexpr (D == 3) {
    out = conv_transpose3d_as_conv_transpose2d(x, w, bias, stride, padding, output_padding, dilation, groups,
                                               out_sizes);
  } else {
    const kernel::Conv2dParams p = params_2d<D>(stride, lo, hi, dilation, groups);
    if (D == 1) x = x.unsqueeze(2), w = w.unsqueeze(2);
    out = transposed_convolution(x, w, bias, out_sizes, p);
    if (D == 1) out = out.squeeze(2);
  }
  return batched ? out : out.squeeze(0);
}

}  // namespace

Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return conv_transpose1d(autocast::to_float32(input), autocast::to_float32(weight), autocast::to_float32(bias), stride, padding, output_padding, groups, dilation);
  }
  return conv_transpose_nd<1>("conv_transpose1d", input, weight, bias, stride, padding, output_padding, groups,
                              dilation);
}
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return conv_transpose2d(autocast::to_float32(input), autocast::to_float32(weight), autocast::to_float32(bias), stride, padding, output_padding, groups, dilation);
  }
  return conv_transpose_nd<2>("conv_transpose2d", input, weight, bias, stride, padding, output_padding, groups,
                              dilation);
}

Tensor conv_transpose3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
                        IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return conv_transpose3d(autocast::to_float32(input), autocast::to_float32(weight), autocast::to_float32(bias),
                            stride, padding, output_padding, groups, dilation);
  }
  return conv_transpose_nd<3>("conv_transpose3d", input, weight, bias, stride, padding, output_padding, groups,
                              dilation);
}

Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return conv3d(autocast::to_lower(input), autocast::to_lower(weight), autocast::to_lower(bias), stride, padding,
                  dilation, groups);
  }
  return conv_nd<3>("conv3d", input, weight, bias, stride, PaddingMode::Explicit, padding, dilation, groups);
}
Tensor conv3d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              std::string_view padding, IntArrayRef dilation, int64_t groups) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return conv3d(autocast::to_lower(input), autocast::to_lower(weight), autocast::to_lower(bias), stride, padding,
                  dilation, groups);
  }
  return conv_nd<3>("conv3d", input, weight, bias, stride, padding_mode("conv3d", padding), {}, dilation, groups);
}

Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return conv1d(autocast::to_lower(input), autocast::to_lower(weight), autocast::to_lower(bias), stride, padding, dilation, groups);
  }
  return conv_nd<1>("conv1d", input, weight, bias, stride, PaddingMode::Explicit, padding, dilation, groups);
}
Tensor conv1d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              std::string_view padding, IntArrayRef dilation, int64_t groups) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return conv1d(autocast::to_lower(input), autocast::to_lower(weight), autocast::to_lower(bias), stride, padding, dilation, groups);
  }
  return conv_nd<1>("conv1d", input, weight, bias, stride, padding_mode("conv1d", padding), {}, dilation, groups);
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return conv2d(autocast::to_lower(input), autocast::to_lower(weight), autocast::to_lower(bias), stride, padding, dilation, groups);
  }
  return conv_nd<2>("conv2d", input, weight, bias, stride, PaddingMode::Explicit, padding, dilation, groups);
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, IntArrayRef stride,
              std::string_view padding, IntArrayRef dilation, int64_t groups) {
  if (autocast::active()) {
    autocast::CastOpScope cast;
    return conv2d(autocast::to_lower(input), autocast::to_lower(weight), autocast::to_lower(bias), stride, padding, dilation, groups);
  }
  return conv_nd<2>("conv2d", input, weight, bias, stride, padding_mode("conv2d", padding), {}, dilation, groups);
}

}  // namespace cohort
