// upsample_nearest2d / upsample_bilinear2d: each is a separable resampling, out = Rh · x · Rw^T with
// sparse rows (Note [Separable resampling]); the backward applies the transposes.
#include "cohort/ops/interpolate.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "cohort/ops/creation.h"
#include "ops/internal.h"

namespace cohort {

namespace {

// Note [Separable resampling]
// Every mode maps output index i of one axis to a few input indices start[i] .. start[i] + count[i] - 1
// with weights; the two axes are independent, so a 2-d resampling is two 1-d passes (W, then H) of
// a sparse matrix. The weights are computed in the input's precision (T), the way ATen computes them,
// so float32 results round as PyTorch's do. The backward is the same passes with the matrices
// transposed (a scatter-add), which is again linear, hence differentiable forever.
struct Axis {
  int64_t in = 0, out = 0, width = 0;
  std::vector<int64_t> start, count;
  std::vector<double> weight;  // out * width
};

// ATen's area_pixel_compute_scale.
template <class T>
T pixel_scale(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  if (align_corners) return out > 1 ? static_cast<T>(in - 1) / static_cast<T>(out - 1) : T(0);
  return scale && *scale > 0 ? static_cast<T>(1.0 / *scale) : static_cast<T>(in) / static_cast<T>(out);
}

Axis make_axis(int64_t in, int64_t out, int64_t width) {
  Axis a;
  a.in = in, a.out = out, a.width = width;
  a.start.assign(out, 0);
  a.count.assign(out, 0);
  a.weight.assign(out * width, 0.0);
  return a;
}

template <class T>
Axis nearest_axis(int64_t in, int64_t out, std::optional<double> scale) {
  Axis a = make_axis(in, out, 1);
  const auto s = static_cast<float>(scale && *scale > 0 ? static_cast<float>(1.0 / *scale)
                                                        : static_cast<float>(in) / static_cast<float>(out));
  for (int64_t i = 0; i < out; ++i) {
    int64_t src = in == out ? i : out == 2 * in ? i >> 1
                                                : std::min(static_cast<int64_t>(std::floor(static_cast<float>(i) * s)), in - 1);
    a.start[i] = src, a.count[i] = 1, a.weight[i] = 1.0;
  }
  return a;
}

template <class T>
Axis linear_axis(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  Axis a = make_axis(in, out, 2);
  const T s = pixel_scale<T>(in, out, align_corners, scale);
  for (int64_t i = 0; i < out; ++i) {
    const T src = align_corners ? s * static_cast<T>(i) : std::max(s * (static_cast<T>(i) + T(0.5)) - T(0.5), T(0));
    const auto i0 = static_cast<int64_t>(src);
    const T l1 = src - static_cast<T>(i0), l0 = T(1) - l1;
    a.start[i] = i0;
    if (i0 < in - 1) {
      a.count[i] = 2, a.weight[2 * i] = l0, a.weight[2 * i + 1] = l1;
    } else {  // both neighbours are the last pixel
      a.count[i] = 1, a.weight[2 * i] = l0 + l1;
    }
  }
  return a;
}

// PyTorch's _compute_weights_aa with the triangle filter (PIL's bilinear "support" 1).
template <class T>
Axis antialias_axis(int64_t in, int64_t out, bool align_corners, std::optional<double> scale) {
  const T s = pixel_scale<T>(in, out, align_corners, scale);
  const T support = s >= T(1) ? s : T(1);
  const T inv = s >= T(1) ? T(1) / s : T(1);
  Axis a = make_axis(in, out, static_cast<int64_t>(std::ceil(support)) * 2 + 1);
  for (int64_t i = 0; i < out; ++i) {
    const T center = s * (static_cast<T>(i) + T(0.5));
    const int64_t lo = std::max<int64_t>(static_cast<int64_t>(center - support + T(0.5)), 0);
    const int64_t n = std::min<int64_t>(static_cast<int64_t>(center + support + T(0.5)), in) - lo;
    std::vector<T> w(std::max<int64_t>(n, 0));
    T total = 0;
    for (int64_t j = 0; j < n; ++j) {
      const T x = std::abs((static_cast<T>(j + lo) - center + T(0.5)) * inv);
      w[j] = x < T(1) ? T(1) - x : T(0);
      total += w[j];
    }
    a.start[i] = lo, a.count[i] = std::min(n, a.width);
    for (int64_t j = 0; j < a.count[i]; ++j) a.weight[i * a.width + j] = total != T(0) ? w[j] / total : w[j];
  }
  return a;
}

// x viewed as [outer, n, inner]: resamples the middle axis (forward: n = a.in -> a.out; transposed:
// n = a.out -> a.in, scatter-adding).
template <class T>
void resample_axis(const T* src, T* dst, int64_t outer, int64_t inner, const Axis& a, bool transpose) {
  const int64_t n_in = transpose ? a.out : a.in, n_out = transpose ? a.in : a.out;
  if (transpose) std::fill(dst, dst + outer * n_out * inner, T(0));
  for (int64_t o = 0; o < outer; ++o) {
    const T* s = src + o * n_in * inner;
    T* d = dst + o * n_out * inner;
    for (int64_t i = 0; i < a.out; ++i) {
      const double* w = a.weight.data() + i * a.width;
      if (!transpose) {
        T* row = d + i * inner;
        for (int64_t q = 0; q < inner; ++q) {
          T acc = 0;
          for (int64_t k = 0; k < a.count[i]; ++k) acc += static_cast<T>(w[k]) * s[(a.start[i] + k) * inner + q];
          row[q] = acc;
        }
      } else {
        const T* row = s + i * inner;
        for (int64_t k = 0; k < a.count[i]; ++k) {
          T* target = d + (a.start[i] + k) * inner;
          const auto wk = static_cast<T>(w[k]);
          for (int64_t q = 0; q < inner; ++q) target[q] += wk * row[q];
        }
      }
    }
  }
}

using AxisPtr = std::shared_ptr<const Axis>;

// [N, C, H, W] -> [N, C, H_out, W_out] (or back, transposed). Recorded, so it differentiates itself.
Tensor resample2d(const Tensor& input, const AxisPtr& ah, const AxisPtr& aw, bool transpose, const char* name) {
  // bfloat16 and float16 resample in float32, rounded once (Note [Reduced floating dtypes]).
  const bool narrow = is_reduced_floating_point(input.dtype());
  Tensor x = narrow ? input.detach().to(kFloat32) : input.detach().contiguous();
  const int64_t n = x.size(0), c = x.size(1);
  const int64_t h_out = transpose ? ah->in : ah->out, w_out = transpose ? aw->in : aw->out;
  const int64_t h_in = x.size(2), w_in = x.size(3);
  Tensor out = empty({n, c, h_out, w_out}, x.options());
  dispatch_floating(x.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    if (!transpose) {  // W first, then H
      std::vector<T> tmp(static_cast<size_t>(n * c * h_in * w_out));
      resample_axis<T>(x.data_ptr<T>(), tmp.data(), n * c * h_in, 1, *aw, false);
      resample_axis<T>(tmp.data(), out.data_ptr<T>(), n * c, w_out, *ah, false);
    } else {
      std::vector<T> tmp(static_cast<size_t>(n * c * h_out * w_in));
      resample_axis<T>(x.data_ptr<T>(), tmp.data(), n * c, w_in, *ah, true);
      resample_axis<T>(tmp.data(), out.data_ptr<T>(), n * c * h_out, 1, *aw, true);
    }
  });
  if (narrow) out = out.to(input.dtype());
  return autograd::record(name, out, {input}, [ah, aw, transpose, name](const Tensor& g) {
    return std::vector<Tensor>{resample2d(g, ah, aw, !transpose, name)};
  });
}

void check_input(const char* op, const Tensor& input, IntArrayRef output_size) {
  detail::check_defined(op, input);
  COHORT_CHECK(input.dim() == 4, op, ": expected a 4-d input [N, C, H, W], got input of shape ", input.sizes());
  COHORT_CHECK_AS(TypeError, is_floating_point(input.dtype()), op,
                  ": expected a floating-point input, got ", input.dtype());
  COHORT_CHECK(input.size(2) > 0 && input.size(3) > 0 && input.size(1) > 0, op,
               ": expected non-empty channel and spatial dims, got input of shape ", input.sizes());
  COHORT_CHECK(output_size.size() == 2 && output_size[0] > 0 && output_size[1] > 0, op,
               ": output_size must be two sizes {H_out, W_out} >= 1, got ", output_size);
}

}  // namespace

Tensor upsample_nearest2d(const Tensor& input, IntArrayRef output_size, std::optional<double> scale_h,
                          std::optional<double> scale_w) {
  check_input("upsample_nearest2d", input, output_size);
  auto ah = std::make_shared<const Axis>(nearest_axis<float>(input.size(2), output_size[0], scale_h));
  auto aw = std::make_shared<const Axis>(nearest_axis<float>(input.size(3), output_size[1], scale_w));
  return resample2d(input, ah, aw, false, "UpsampleNearest2DBackward0");
}

Tensor upsample_bilinear2d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                           std::optional<double> scale_h, std::optional<double> scale_w, bool antialias) {
  check_input("upsample_bilinear2d", input, output_size);
  const int64_t h = input.size(2), w = input.size(3);
  const DType compute = is_reduced_floating_point(input.dtype()) ? kFloat32 : input.dtype();
  return dispatch_floating(compute, "upsample_bilinear2d", [&](auto tag) {
    using T = decltype(tag);
    auto make = [&](int64_t in, int64_t out, std::optional<double> s) {
      return std::make_shared<const Axis>(antialias ? antialias_axis<T>(in, out, align_corners, s)
                                                    : linear_axis<T>(in, out, align_corners, s));
    };
    return resample2d(input, make(h, output_size[0], scale_h), make(w, output_size[1], scale_w), false,
                      antialias ? "UpsampleBilinear2DAaBackward0" : "UpsampleBilinear2DBackward0");
  });
}

}  // namespace cohort
