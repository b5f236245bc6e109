// 3-d pooling with plain strided loops, every floating dtype: max (with indices), average and the
// adaptive pools, and the average pools' backward. One job per (n, c) volume, so threads never share
// an output; bfloat16 and float16 run on float32 copies (Note [Reduced floating dtypes] in
// src/ops/README.md). Sums are kept in double.
// N batch, C channels, D H W input, P Q R output.
#include <cmath>
#include <limits>
#include <vector>

#include "ops/cpu/loops.h"
#include "ops/cpu/pooling_kernels.h"
#include "ops/cpu/reduced.h"

namespace cohort::kernel {

namespace {

int64_t volumes(const Tensor& t) { return t.size(0) * t.size(1); }
int64_t grain_for(int64_t work) { return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, work)); }
int64_t volume_offset(const Tensor& t, int64_t job) {
  return (job / t.size(1)) * t.stride(0) + (job % t.size(1)) * t.stride(1);
}

// The extent [lo, hi) of one window along one dim, and its extent clipped to the padded input (for
// count_include_pad): PyTorch's average pool windows.
struct Span {
  int64_t lo, hi, padded;
  Span(int64_t o, int64_t size, int64_t k, int64_t s, int64_t pad) {
    lo = o * s - pad;
    hi = std::min(lo + k, size + pad);
    padded = hi - lo;
    lo = std::max<int64_t>(lo, 0), hi = std::min(hi, size);
  }
  // PyTorch's adaptive window: [floor(o * size / out), ceil((o + 1) * size / out)).
  static Span adaptive(int64_t o, int64_t out, int64_t size) {
    Span sp(0, 0, 0, 1, 0);
    sp.lo = (o * size) / out, sp.hi = ((o + 1) * size + out - 1) / out, sp.padded = sp.hi - sp.lo;
    return sp;
  }
};

// The taps k of a window starting at `start` (step `dilation`) that land inside [0, size): [lo, hi).
struct Taps {
  int64_t lo, hi;
  Taps(int64_t start, int64_t kernel, int64_t dilation, int64_t size) {
    lo = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
    hi = start + (kernel - 1) * dilation < size ? kernel : (size - 1 - start) / dilation + 1;
    if (hi < lo) hi = lo;
  }
};

// The sizes of one pool: input D H W, output P Q R.
struct Dims {
  int64_t D, H, W, P, Q, R;
  Dims(const Tensor& in, const Tensor& out)
      : D(in.size(2)), H(in.size(3)), W(in.size(4)), P(out.size(2)), Q(out.size(3)), R(out.size(4)) {}
};

}  // namespace

void max_pool3d_forward(const Tensor& out, const Tensor& indices, const Tensor& in, const Pool3dParams& p) {
  if (is_reduced_floating_point(in.dtype())) {  // the max is exact on a float32 copy
    const Tensor x = widen(in);
    return into(out, [&](const Tensor& o) { max_pool3d_forward(o, indices, x, p); });
  }
  COHORT_ASSERT(out.is_contiguous() && indices.is_contiguous());
  const Dims n(in, out);
  dispatch_floating(in.dtype(), "max_pool3d", [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.data_ptr<T>();
    T* y = out.data_ptr<T>();
    int64_t* idx = indices.data_ptr<int64_t>();
    const int64_t sd = in.stride(2), sh = in.stride(3), sw = in.stride(4), outs = n.P * n.Q * n.R;
    const int64_t work = outs * p.kernel[0] * p.kernel[1] * p.kernel[2];
    parallel_for(volumes(in), grain_for(work), [&](int64_t begin, int64_t end) {
      for (int64_t job = begin; job < end; ++job) {
        const T* vol = x + volume_offset(in, job);
        for (int64_t o = 0; o < outs; ++o) {
          const int64_t od = o / (n.Q * n.R), oh = o / n.R % n.Q, ow = o % n.R;
          T best = -std::numeric_limits<T>::infinity();
          int64_t best_at = -1;
          const int64_t d0 = od * p.stride[0] - p.padding[0], h0 = oh * p.stride[1] - p.padding[1],
                        w0 = ow * p.stride[2] - p.padding[2];
          const Taps td(d0, p.kernel[0], p.dilation[0], n.D), th(h0, p.kernel[1], p.dilation[1], n.H),
              tw(w0, p.kernel[2], p.dilation[2], n.W);
          for (int64_t kd = td.lo; kd < td.hi; ++kd) {
            const int64_t d = d0 + kd * p.dilation[0];
            for (int64_t kh = th.lo; kh < th.hi; ++kh) {
              const int64_t h = h0 + kh * p.dilation[1];
              for (int64_t kw = tw.lo; kw < tw.hi; ++kw) {
                const int64_t w = w0 + kw * p.dilation[2];
                const T v = vol[d * sd + h * sh + w * sw];
                // NaN wins, and the last NaN gives the index, as in PyTorch's loop
                if (best_at < 0 || v > best || std::isnan(v)) best = v, best_at = (d * n.H + h) * n.W + w;
              }
            }
          }
          y[job * outs + o] = best;
          idx[job * outs + o] = best_at;
        }
      }
    });
  });
}

void avg_pool3d_forward(const Tensor& out, const Tensor& in, const Pool3dParams& p) {
  if (is_reduced_floating_point(in.dtype())) {
    const Tensor x = widen(in);
    return into(out, [&](const Tensor& o) { avg_pool3d_forward(o, x, p); });
  }
  COHORT_ASSERT(out.is_contiguous());
  const Dims n(in, out);
  dispatch_floating(in.dtype(), "avg_pool3d", [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.data_ptr<T>();
    T* y = out.data_ptr<T>();
    const int64_t sd = in.stride(2), sh = in.stride(3), sw = in.stride(4), outs = n.P * n.Q * n.R;
    const int64_t work = outs * p.kernel[0] * p.kernel[1] * p.kernel[2];
    parallel_for(volumes(in), grain_for(work), [&](int64_t begin, int64_t end) {
      for (int64_t job = begin; job < end; ++job) {
        const T* vol = x + volume_offset(in, job);
        for (int64_t o = 0; o < outs; ++o) {
          const Span a(o / (n.Q * n.R), n.D, p.kernel[0], p.stride[0], p.padding[0]);
          const Span b(o / n.R % n.Q, n.H, p.kernel[1], p.stride[1], p.padding[1]);
          const Span c(o % n.R, n.W, p.kernel[2], p.stride[2], p.padding[2]);
          double sum = 0;
          for (int64_t d = a.lo; d < a.hi; ++d)
            for (int64_t h = b.lo; h < b.hi; ++h)
              for (int64_t w = c.lo; w < c.hi; ++w) sum += static_cast<double>(vol[d * sd + h * sh + w * sw]);
          const int64_t count = p.count_include_pad ? a.padded * b.padded * c.padded
                                                    : (a.hi - a.lo) * (b.hi - b.lo) * (c.hi - c.lo);
          y[job * outs + o] = static_cast<T>(count > 0 ? sum / static_cast<double>(count) : 0.0);
        }
      }
    });
  });
}

void avg_pool3d_backward(const Tensor& din, const Tensor& dout, const Pool3dParams& p) {
  if (is_reduced_floating_point(din.dtype())) {
    const Tensor g = widen(dout);
    return into(din, [&](const Tensor& o) { avg_pool3d_backward(o, g, p); });
  }
  COHORT_ASSERT(din.is_contiguous());
  const Dims n(din, dout);
  dispatch_floating(din.dtype(), "avg_pool3d_backward", [&](auto tag) {
    using T = decltype(tag);
    const T* dy = dout.data_ptr<T>();
    T* dx = din.data_ptr<T>();
    const int64_t ysd = dout.stride(2), ysh = dout.stride(3), ysw = dout.stride(4), vol = n.D * n.H * n.W;
    parallel_for(volumes(din), grain_for(n.P * n.Q * n.R * p.kernel[0] * p.kernel[1] * p.kernel[2]),
                 [&](int64_t begin, int64_t end) {
      std::vector<double> acc(static_cast<size_t>(vol));
      for (int64_t job = begin; job < end; ++job) {
        std::fill(acc.begin(), acc.end(), 0.0);
        const T* g = dy + volume_offset(dout, job);
        for (int64_t od = 0; od < n.P; ++od)
          for (int64_t oh = 0; oh < n.Q; ++oh)
            for (int64_t ow = 0; ow < n.R; ++ow) {
              const Span a(od, n.D, p.kernel[0], p.stride[0], p.padding[0]);
              const Span b(oh, n.H, p.kernel[1], p.stride[1], p.padding[1]);
              const Span c(ow, n.W, p.kernel[2], p.stride[2], p.padding[2]);
              const int64_t count = p.count_include_pad ? a.padded * b.padded * c.padded
                                                        : (a.hi - a.lo) * (b.hi - b.lo) * (c.hi - c.lo);
              if (count <= 0) continue;
              const double share = static_cast<double>(g[od * ysd + oh * ysh + ow * ysw]) / static_cast<double>(count);
              for (int64_t d = a.lo; d < a.hi; ++d)
                for (int64_t h = b.lo; h < b.hi; ++h)
                  for (int64_t w = c.lo; w < c.hi; ++w) acc[(d * n.H + h) * n.W + w] += share;
            }
        T* out = dx + job * vol;
        for (int64_t i = 0; i < vol; ++i) out[i] = static_cast<T>(acc[i]);
      }
    });
  });
}

void adaptive_avg_pool3d_forward(const Tensor& out, const Tensor& in) {
  if (is_reduced_floating_point(in.dtype())) {
    const Tensor x = widen(in);
    return into(out, [&](const Tensor& o) { adaptive_avg_pool3d_forward(o, x); });
  }
  COHORT_ASSERT(out.is_contiguous());
  const Dims n(in, out);
  dispatch_floating(in.dtype(), "adaptive_avg_pool3d", [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.data_ptr<T>();
    T* y = out.data_ptr<T>();
    const int64_t sd = in.stride(2), sh = in.stride(3), sw = in.stride(4), outs = n.P * n.Q * n.R;
    parallel_for(volumes(in), grain_for(n.D * n.H * n.W + outs), [&](int64_t begin, int64_t end) {
      for (int64_t job = begin; job < end; ++job) {
        const T* vol = x + volume_offset(in, job);
        for (int64_t o = 0; o < outs; ++o) {
          const Span a = Span::adaptive(o / (n.Q * n.R), n.P, n.D), b = Span::adaptive(o / n.R % n.Q, n.Q, n.H),
                     c = Span::adaptive(o % n.R, n.R, n.W);
          double sum = 0;
          for (int64_t d = a.lo; d < a.hi; ++d)
            for (int64_t h = b.lo; h < b.hi; ++h)
              for (int64_t w = c.lo; w < c.hi; ++w) sum += static_cast<double>(vol[d * sd + h * sh + w * sw]);
          y[job * outs + o] = static_cast<T>(sum / static_cast<double>(a.padded * b.padded * c.padded));
        }
      }
    });
  });
}

void adaptive_avg_pool3d_backward(const Tensor& din, const Tensor& dout) {
  if (is_reduced_floating_point(din.dtype())) {
    const Tensor g = widen(dout);
    return into(din, [&](const Tensor& o) { adaptive_avg_pool3d_backward(o, g); });
  }
  COHORT_ASSERT(din.is_contiguous());
  const Dims n(din, dout);
  dispatch_floating(din.dtype(), "adaptive_avg_pool3d_backward", [&](auto tag) {
    using T = decltype(tag);
    const T* dy = dout.data_ptr<T>();
    T* dx = din.data_ptr<T>();
    const int64_t ysd = dout.stride(2), ysh = dout.stride(3), ysw = dout.stride(4), vol = n.D * n.H * n.W;
    parallel_for(volumes(din), grain_for(vol + n.P * n.Q * n.R), [&](int64_t begin, int64_t end) {
      std::vector<double> acc(static_cast<size_t>(vol));
      for (int64_t job = begin; job < end; ++job) {
        std::fill(acc.begin(), acc.end(), 0.0);
        const T* g = dy + volume_offset(dout, job);
        for (int64_t od = 0; od < n.P; ++od)
          for (int64_t oh = 0; oh < n.Q; ++oh)
            for (int64_t ow = 0; ow < n.R; ++ow) {
              const Span a = Span::adaptive(od, n.P, n.D), b = Span::adaptive(oh, n.Q, n.H),
                         c = Span::adaptive(ow, n.R, n.W);
              const double share = static_cast<double>(g[od * ysd + oh * ysh + ow * ysw]) /
                                   static_cast<double>(a.padded * b.padded * c.padded);
              for (int64_t d = a.lo; d < a.hi; ++d)
                for (int64_t h = b.lo; h < b.hi; ++h)
                  for (int64_t w = c.lo; w < c.hi; ++w) acc[(d * n.H + h) * n.W + w] += share;
            }
        T* out = dx + job * vol;
        for (int64_t i = 0; i < vol; ++i) out[i] = static_cast<T>(acc[i]);
      }
    });
  });
}

void adaptive_max_pool3d_forward(const Tensor& out, const Tensor& indices, const Tensor& in) {
  if (is_reduced_floating_point(in.dtype())) {
    const Tensor x = widen(in);
    return into(out, [&](const Tensor& o) { adaptive_max_pool3d_forward(o, indices, x); });
  }
  COHORT_ASSERT(out.is_contiguous() && indices.is_contiguous());
  const Dims n(in, out);
  dispatch_floating(in.dtype(), "adaptive_max_pool3d", [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.data_ptr<T>();
    T* y = out.data_ptr<T>();
    int64_t* idx = indices.data_ptr<int64_t>();
    const int64_t sd = in.stride(2), sh = in.stride(3), sw = in.stride(4), outs = n.P * n.Q * n.R;
    parallel_for(volumes(in), grain_for(n.D * n.H * n.W + outs), [&](int64_t begin, int64_t end) {
      for (int64_t job = begin; job < end; ++job) {
        const T* vol = x + volume_offset(in, job);
        for (int64_t o = 0; o < outs; ++o) {
          const Span a = Span::adaptive(o / (n.Q * n.R), n.P, n.D), b = Span::adaptive(o / n.R % n.Q, n.Q, n.H),
                     c = Span::adaptive(o % n.R, n.R, n.W);
          T best = vol[a.lo * sd + b.lo * sh + c.lo * sw];
          int64_t best_at = (a.lo * n.H + b.lo) * n.W + c.lo;
          for (int64_t d = a.lo; d < a.hi; ++d)
            for (int64_t h = b.lo; h < b.hi; ++h)
              for (int64_t w = c.lo; w < c.hi; ++w) {
                const T v = vol[d * sd + h * sh + w * sw];
                if (v > best || std::isnan(v)) best = v, best_at = (d * n.H + h) * n.W + w;  // the last NaN wins
              }
          y[job * outs + o] = best;
          idx[job * outs + o] = best_at;
        }
      }
    });
  });
}

}  // namespace cohort::kernel
