// 2-d convolution with plain strided loops: the reference for the oneDNN path and the kernel for the
// dtypes oneDNN is not used for (float64). N batch, C/O in/out channels, G groups (Cg = C / G and
// Og = O / G per group), H W input, P Q output, kh kw kernel taps. Sums are kept in double (int64
// for integers) whatever the dtype.
#include <type_traits>
#include <vector>

#include "ops/cpu/conv_kernels.h"
#include "ops/cpu/loops.h"

namespace cohort::kernel {

namespace {

template <class T>
using Acc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

// The geometry every loop needs, read once.
struct Geometry {
  int64_t N, C, H, W, O, P, Q, KH, KW, G, Cg, Og;
  Geometry(const Tensor& in, const Tensor& weight, const Tensor& out, const Conv2dParams& p)
      : N(in.size(0)), C(in.size(1)), H(in.size(2)), W(in.size(3)), O(weight.size(0)), P(out.size(2)),
        Q(out.size(3)), KH(weight.size(2)), KW(weight.size(3)), G(p.groups), Cg(C / p.groups), Og(O / p.groups) {}
};

// Input row/column that output position `o` reads with kernel tap `k` (may fall in the padding).
inline int64_t source(int64_t o, int64_t k, int dim, const Conv2dParams& p) {
  return o * p.stride[dim] - p.pad_lo[dim] + k * p.dilation[dim];
}

}  // namespace

void conv2d_forward_reference(const Tensor& out, const Tensor& in, const Tensor& weight, const Tensor& bias,
                              const Conv2dParams& p) {
  COHORT_ASSERT(out.is_contiguous());
  const Geometry g(in, weight, out, p);
  dispatch(out.dtype(), "conv2d", [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.data_ptr<T>();
    const T* w = weight.data_ptr<T>();
    const T* b = bias.defined() ? bias.data_ptr<T>() : nullptr;
    T* y = out.data_ptr<T>();
    const auto xs = in.strides(), ws = weight.strides();
    const int64_t bs = bias.defined() ? bias.stride(0) : 0;
    parallel_for(g.N * g.O, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, g.P * g.Q * g.Cg * g.KH * g.KW)),
                 [&](int64_t begin, int64_t end) {
      for (int64_t job = begin; job < end; ++job) {
        const int64_t n = job / g.O, o = job % g.O, c0 = (o / g.Og) * g.Cg;
        for (int64_t oh = 0; oh < g.P; ++oh)
          for (int64_t ow = 0; ow < g.Q; ++ow) {
            Acc<T> sum = b ? static_cast<Acc<T>>(b[o * bs]) : Acc<T>(0);
            for (int64_t c = 0; c < g.Cg; ++c)
              for (int64_t kh = 0; kh < g.KH; ++kh) {
                const int64_t h = source(oh, kh, 0, p);
                if (h < 0 || h >= g.H) continue;
                for (int64_t kw = 0; kw < g.KW; ++kw) {
                  const int64_t iw = source(ow, kw, 1, p);
                  if (iw < 0 || iw >= g.W) continue;
                  sum += static_cast<Acc<T>>(x[n * xs[0] + (c0 + c) * xs[1] + h * xs[2] + iw * xs[3]]) *
                         static_cast<Acc<T>>(w[o * ws[0] + c * ws[1] + kh * ws[2] + kw * ws[3]]);
                }
              }
            y[((n * g.O + o) * g.P + oh) * g.Q + ow] = static_cast<T>(sum);
          }
      }
    });
  });
}

void conv2d_backward_data_reference(const Tensor& din, const Tensor& dout, const Tensor& weight,
                                    const Conv2dParams& p) {
  COHORT_ASSERT(din.is_contiguous());
  const Geometry g(din, weight, dout, p);
  dispatch(din.dtype(), "conv2d_backward", [&](auto tag) {
    using T = decltype(tag);
    const T* dy = dout.data_ptr<T>();
    const T* w = weight.data_ptr<T>();
    T* dx = din.data_ptr<T>();
    const auto ys = dout.strides(), ws = weight.strides();
    // One job per (n, input channel): each writes only its own plane, so no two threads collide.
    parallel_for(g.N * g.C, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, g.P * g.Q * g.Og * g.KH * g.KW)),
                 [&](int64_t begin, int64_t end) {
      std::vector<Acc<T>> plane(static_cast<size_t>(g.H * g.W));
      for (int64_t job = begin; job < end; ++job) {
        const int64_t n = job / g.C, ci = job % g.C, grp = ci / g.Cg, c = ci % g.Cg;
        std::fill(plane.begin(), plane.end(), Acc<T>(0));
        for (int64_t o = grp * g.Og; o < (grp + 1) * g.Og; ++o)
          for (int64_t oh = 0; oh < g.P; ++oh)
            for (int64_t ow = 0; ow < g.Q; ++ow) {
              const Acc<T> gy = static_cast<Acc<T>>(dy[n * ys[0] + o * ys[1] + oh * ys[2] + ow * ys[3]]);
              for (int64_t kh = 0; kh < g.KH; ++kh) {
                const int64_t h = source(oh, kh, 0, p);
                if (h < 0 || h >= g.H) continue;
                for (int64_t kw = 0; kw < g.KW; ++kw) {
                  const int64_t iw = source(ow, kw, 1, p);
                  if (iw < 0 || iw >= g.W) continue;
                  plane[h * g.W + iw] += gy * static_cast<Acc<T>>(w[o * ws[0] + c * ws[1] + kh * ws[2] + kw * ws[3]]);
                }
              }
            }
        T* dst = dx + (n * g.C + ci) * g.H * g.W;
        for (int64_t i = 0; i < g.H * g.W; ++i) dst[i] = static_cast<T>(plane[i]);
      }
    });
  });
}

void conv2d_backward_weights_reference(const Tensor& dweight, const Tensor& dbias, const Tensor& in,
                                       const Tensor& dout, const Conv2dParams& p) {
  COHORT_ASSERT(dweight.is_contiguous() && (!dbias.defined() || dbias.is_contiguous()));
  const Geometry g(in, dweight, dout, p);
  dispatch(dweight.dtype(), "conv2d_backward", [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.data_ptr<T>();
    const T* dy = dout.data_ptr<T>();
    T* dw = dweight.data_ptr<T>();
    T* db = dbias.defined() ? dbias.data_ptr<T>() : nullptr;
    const auto xs = in.strides(), ys = dout.strides();
    // One job per output channel: it owns dweight[o] and dbias[o].
    parallel_for(g.O, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, g.N * g.P * g.Q * g.Cg * g.KH * g.KW)),
                 [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const int64_t c0 = (o / g.Og) * g.Cg;
        if (db) {
          Acc<T> sum = 0;
          for (int64_t n = 0; n < g.N; ++n)
            for (int64_t oh = 0; oh < g.P; ++oh)
              for (int64_t ow = 0; ow < g.Q; ++ow) sum += static_cast<Acc<T>>(dy[n * ys[0] + o * ys[1] + oh * ys[2] + ow * ys[3]]);
          db[o] = static_cast<T>(sum);
        }
        for (int64_t c = 0; c < g.Cg; ++c)
          for (int64_t kh = 0; kh < g.KH; ++kh)
            for (int64_t kw = 0; kw < g.KW; ++kw) {
              Acc<T> sum = 0;
              for (int64_t n = 0; n < g.N; ++n)
                for (int64_t oh = 0; oh < g.P; ++oh) {
                  const int64_t h = source(oh, kh, 0, p);
                  if (h < 0 || h >= g.H) continue;
                  for (int64_t ow = 0; ow < g.Q; ++ow) {
                    const int64_t iw = source(ow, kw, 1, p);
                    if (iw < 0 || iw >= g.W) continue;
                    sum += static_cast<Acc<T>>(x[n * xs[0] + (c0 + c) * xs[1] + h * xs[2] + iw * xs[3]]) *
                           static_cast<Acc<T>>(dy[n * ys[0] + o * ys[1] + oh * ys[2] + ow * ys[3]]);
                  }
                }
              dw[((o * g.Cg + c) * g.KH + kh) * g.KW + kw] = static_cast<T>(sum);
            }
      }
    });
  });
}

}  // namespace cohort::kernel
