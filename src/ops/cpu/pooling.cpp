// 2-d pooling with plain strided loops, every floating dtype: the average and adaptive pools, the
// max pools' backward, and the max pool's plain forward, which the tests hold the faster one in
// max_pool.cpp against. oneDNN 2.6 runs plain-nchw pooling on its generic loops except on AVX-512,
// and these were 1.2-3.5x faster than those on the AVX2 EPYC (32x64x32x32, 2x2 and 3x3 windows).
// One job per (n, c) plane, so threads never share an output. bfloat16 and float16 run on float32
// copies (`widen`/`into`, Note [Reduced floating dtypes] in src/ops/README.md): a max is exact
// there, and an average or a gradient sum is rounded once.
// N batch, C channels, H W input, P Q output, kh kw window taps. Sums are kept in double.
#include <cmath>
#include <limits>
#include <vector>

#include "ops/cpu/loops.h"
#include "cohort/ops/creation.h"
#include "ops/cpu/pooling_kernels.h"
#include "ops/cpu/reduced.h"

namespace cohort::kernel {

namespace {

// Planes of an [N, C, *, *] tensor, and the grain that keeps a job worth a thread.
int64_t planes(const Tensor& t) { return t.size(0) * t.size(1); }
int64_t grain_for(int64_t work_per_plane) { return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, work_per_plane)); }

// Offset of plane `job` (= n * C + c) in a strided tensor.
int64_t plane_offset(const Tensor& t, int64_t job) { return (job / t.size(1)) * t.stride(0) + (job % t.size(1)) * t.stride(1); }

// PyTorch's adaptive window: [floor(i * in / out), ceil((i + 1) * in / out)).
inline int64_t start_index(int64_t i, int64_t out, int64_t in) { return (i * in) / out; }
inline int64_t end_index(int64_t i, int64_t out, int64_t in) { return ((i + 1) * in + out - 1) / out; }

// The input rows [h0, h1) and columns [w0, w1) under output (oh, ow) of an average pool, and its
// divisor: PyTorch's, the window clipped to the padded input, or to the input itself.
struct AvgWindow {
  int64_t h0, h1, w0, w1, count;
  AvgWindow(int64_t oh, int64_t ow, int64_t H, int64_t W, const Pool2dParams& p) {
    h0 = oh * p.stride[0] - p.padding[0], w0 = ow * p.stride[1] - p.padding[1];
    h1 = std::min(h0 + p.kernel[0], H + p.padding[0]), w1 = std::min(w0 + p.kernel[1], W + p.padding[1]);
    const int64_t padded_count = (h1 - h0) * (w1 - w0);
    h0 = std::max<int64_t>(h0, 0), w0 = std::max<int64_t>(w0, 0), h1 = std::min(h1, H), w1 = std::min(w1, W);
    count = p.count_include_pad ? padded_count : (h1 - h0) * (w1 - w0);
  }
};

}  // namespace

void max_pool2d_forward_reference(const Tensor& out, const Tensor& indices, const Tensor& in, const Pool2dParams& p) {
  if (is_reduced_floating_point(in.dtype())) {
    const Tensor x = widen(in);
    return into(out, [&](const Tensor& o) { max_pool2d_forward_reference(o, indices, x, p); });
  }
  COHORT_ASSERT(out.is_contiguous() && indices.is_contiguous());
  const int64_t H = in.size(2), W = in.size(3), P = out.size(2), Q = out.size(3);
  dispatch_floating(in.dtype(), "max_pool2d", [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.data_ptr<T>();
    T* y = out.data_ptr<T>();
    int64_t* idx = indices.data_ptr<int64_t>();
    const int64_t sh = in.stride(2), sw = in.stride(3);
    parallel_for(planes(in), grain_for(P * Q * p.kernel[0] * p.kernel[1]), [&](int64_t begin, int64_t end) {
      for (int64_t job = begin; job < end; ++job) {
        const T* plane = x + plane_offset(in, job);
        for (int64_t oh = 0; oh < P; ++oh)
          for (int64_t ow = 0; ow < Q; ++ow) {
            T best = -std::numeric_limits<T>::infinity();
            int64_t best_at = -1;
            for (int64_t kh = 0; kh < p.kernel[0]; ++kh) {
              const int64_t h = oh * p.stride[0] - p.padding[0] + kh * p.dilation[0];
              if (h < 0 || h >= H) continue;
              for (int64_t kw = 0; kw < p.kernel[1]; ++kw) {
                const int64_t w = ow * p.stride[1] - p.padding[1] + kw * p.dilation[1];
                if (w < 0 || w >= W) continue;
                const T v = plane[h * sh + w * sw];
                // NaN wins, and the last NaN gives the index, as in PyTorch's loop
                if (best_at < 0 || v > best || std::isnan(v)) best = v, best_at = h * W + w;
              }
            }
            y[(job * P + oh) * Q + ow] = best;
            idx[(job * P + oh) * Q + ow] = best_at;
          }
      }
    });
  });
}

void max_pool2d_backward(const Tensor& din, const Tensor& dout, const Tensor& indices) {
  if (is_reduced_floating_point(din.dtype())) {
    const Tensor g = widen(dout);
    return into(din, [&](const Tensor& o) { max_pool2d_backward(o, g, indices); });
  }
  COHORT_ASSERT(din.is_contiguous());
  const int64_t HW = din.size(2) * din.size(3), P = dout.size(2), Q = dout.size(3);
  dispatch_floating(din.dtype(), "max_pool2d_backward", [&](auto tag) {
    using T = decltype(tag);
    const T* dy = dout.data_ptr<T>();
    const int64_t* idx = indices.data_ptr<int64_t>();
    T* dx = din.data_ptr<T>();
    const int64_t ysh = dout.stride(2), ysw = dout.stride(3), ish = indices.stride(2), isw = indices.stride(3);
    parallel_for(planes(din), grain_for(HW + P * Q), [&](int64_t begin, int64_t end) {
      for (int64_t job = begin; job < end; ++job) {
        T* plane = dx + job * HW;
        std::fill(plane, plane + HW, T(0));
        const T* g = dy + plane_offset(dout, job);
        const int64_t* at = idx + plane_offset(indices, job);
        for (int64_t oh = 0; oh < P; ++oh)
          for (int64_t ow = 0; ow < Q; ++ow) plane[at[oh * ish + ow * isw]] += g[oh * ysh + ow * ysw];
      }
    });
  });
}

void avg_pool2d_forward(const Tensor& out, const Tensor& in, const Pool2dParams& p) {
  if (is_reduced_floating_point(in.dtype())) {
    const Tensor x = widen(in);
    return into(out, [&](const Tensor& o) { avg_pool2d_forward(o, x, p); });
  }
  COHORT_ASSERT(out.is_contiguous());
  const int64_t H = in.size(2), W = in.size(3), P = out.size(2), Q = out.size(3);
  dispatch_floating(in.dtype(), "avg_pool2d", [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.data_ptr<T>();
    T* y = out.data_ptr<T>();
    const int64_t sh = in.stride(2), sw = in.stride(3);
    parallel_for(planes(in), grain_for(P * Q * p.kernel[0] * p.kernel[1]), [&](int64_t begin, int64_t end) {
      for (int64_t job = begin; job < end; ++job) {
        const T* plane = x + plane_offset(in, job);
        for (int64_t oh = 0; oh < P; ++oh)
          for (int64_t ow = 0; ow < Q; ++ow) {
            const AvgWindow win(oh, ow, H, W, p);
            double sum = 0;
            for (int64_t h = win.h0; h < win.h1; ++h)
              for (int64_t w = win.w0; w < win.w1; ++w) sum += static_cast<double>(plane[h * sh + w * sw]);
            y[(job * P + oh) * Q + ow] = static_cast<T>(win.count > 0 ? sum / static_cast<double>(win.count) : 0.0);
          }
      }
    });
  });
}

void avg_pool2d_backward(const Tensor& din, const Tensor& dout, const Pool2dParams& p) {
  if (is_reduced_floating_point(din.dtype())) {
    const Tensor g = widen(dout);
    return into(din, [&](const Tensor& o) { avg_pool2d_backward(o, g, p); });
  }
  COHORT_ASSERT(din.is_contiguous());
  const int64_t H = din.size(2), W = din.size(3), P = dout.size(2), Q = dout.size(3);
  dispatch_floating(din.dtype(), "avg_pool2d_backward", [&](auto tag) {
    using T = decltype(tag);
    const T* dy = dout.data_ptr<T>();
    T* dx = din.data_ptr<T>();
    const int64_t ysh = dout.stride(2), ysw = dout.stride(3);
    parallel_for(planes(din), grain_for(P * Q * p.kernel[0] * p.kernel[1]), [&](int64_t begin, int64_t end) {
      std::vector<double> acc(static_cast<size_t>(H * W));
      for (int64_t job = begin; job < end; ++job) {
        std::fill(acc.begin(), acc.end(), 0.0);
        const T* g = dy + plane_offset(dout, job);
        for (int64_t oh = 0; oh < P; ++oh)
          for (int64_t ow = 0; ow < Q; ++ow) {
            const AvgWindow win(oh, ow, H, W, p);
            if (win.count <= 0) continue;
            const double share = static_cast<double>(g[oh * ysh + ow * ysw]) / static_cast<double>(win.count);
            for (int64_t h = win.h0; h < win.h1; ++h)
              for (int64_t w = win.w0; w < win.w1; ++w) acc[h * W + w] += share;
          }
        T* plane = dx + job * H * W;
        for (int64_t i = 0; i < H * W; ++i) plane[i] = static_cast<T>(acc[i]);
      }
    });
  });
}

void adaptive_avg_pool2d_forward(const Tensor& out, const Tensor& in) {
  if (is_reduced_floating_point(in.dtype())) {
    const Tensor x = widen(in);
    return into(out, [&](const Tensor& o) { adaptive_avg_pool2d_forward(o, x); });
  }
  COHORT_ASSERT(out.is_contiguous());
  const int64_t H = in.size(2), W = in.size(3), P = out.size(2), Q = out.size(3);
  dispatch_floating(in.dtype(), "adaptive_avg_pool2d", [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.data_ptr<T>();
    T* y = out.data_ptr<T>();
    const int64_t sh = in.stride(2), sw = in.stride(3);
    parallel_for(planes(in), grain_for(H * W + P * Q), [&](int64_t begin, int64_t end) {
      for (int64_t job = begin; job < end; ++job) {
        const T* plane = x + plane_offset(in, job);
        for (int64_t oh = 0; oh < P; ++oh) {
          const int64_t h0 = start_index(oh, P, H), h1 = end_index(oh, P, H);
          for (int64_t ow = 0; ow < Q; ++ow) {
            const int64_t w0 = start_index(ow, Q, W), w1 = end_index(ow, Q, W);
            double sum = 0;
            for (int64_t h = h0; h < h1; ++h)
              for (int64_t w = w0; w < w1; ++w) sum += static_cast<double>(plane[h * sh + w * sw]);
            y[(job * P + oh) * Q + ow] = static_cast<T>(sum / static_cast<double>((h1 - h0) * (w1 - w0)));
          }
        }
      }
    });
  });
}

void adaptive_avg_pool2d_backward(const Tensor& din, const Tensor& dout) {
  if (is_reduced_floating_point(din.dtype())) {
    const Tensor g = widen(dout);
    return into(din, [&](const Tensor& o) { adaptive_avg_pool2d_backward(o, g); });
  }
  COHORT_ASSERT(din.is_contiguous());
  const int64_t H = din.size(2), W = din.size(3), P = dout.size(2), Q = dout.size(3);
  dispatch_floating(din.dtype(), "adaptive_avg_pool2d_backward", [&](auto tag) {
    using T = decltype(tag);
    const T* dy = dout.data_ptr<T>();
    T* dx = din.data_ptr<T>();
    const int64_t ysh = dout.stride(2), ysw = dout.stride(3);
    parallel_for(planes(din), grain_for(H * W + P * Q), [&](int64_t begin, int64_t end) {
      std::vector<double> acc(static_cast<size_t>(H * W));
      for (int64_t job = begin; job < end; ++job) {
        std::fill(acc.begin(), acc.end(), 0.0);
        const T* g = dy + plane_offset(dout, job);
        for (int64_t oh = 0; oh < P; ++oh) {
          const int64_t h0 = start_index(oh, P, H), h1 = end_index(oh, P, H);
          for (int64_t ow = 0; ow < Q; ++ow) {
            const int64_t w0 = start_index(ow, Q, W), w1 = end_index(ow, Q, W);
            const double share = static_cast<double>(g[oh * ysh + ow * ysw]) / static_cast<double>((h1 - h0) * (w1 - w0));
            for (int64_t h = h0; h < h1; ++h)
              for (int64_t w = w0; w < w1; ++w) acc[h * W + w] += share;
          }
        }
        T* plane = dx + job * H * W;
        for (int64_t i = 0; i < H * W; ++i) plane[i] = static_cast<T>(acc[i]);
      }
    });
  });
}

void adaptive_max_pool2d_forward(const Tensor& out, const Tensor& indices, const Tensor& in) {
  if (is_reduced_floating_point(in.dtype())) {
    const Tensor x = widen(in);
    return into(out, [&](const Tensor& o) { adaptive_max_pool2d_forward(o, indices, x); });
  }
  COHORT_ASSERT(out.is_contiguous() && indices.is_contiguous());
  const int64_t H = in.size(2), W = in.size(3), P = out.size(2), Q = out.size(3);
  dispatch_floating(in.dtype(), "adaptive_max_pool2d", [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.data_ptr<T>();
    T* y = out.data_ptr<T>();
    int64_t* idx = indices.data_ptr<int64_t>();
    const int64_t sh = in.stride(2), sw = in.stride(3);
    parallel_for(planes(in), grain_for(H * W + P * Q), [&](int64_t begin, int64_t end) {
      for (int64_t job = begin; job < end; ++job) {
        const T* plane = x + plane_offset(in, job);
        for (int64_t oh = 0; oh < P; ++oh) {
          const int64_t h0 = start_index(oh, P, H), h1 = end_index(oh, P, H);
          for (int64_t ow = 0; ow < Q; ++ow) {
            const int64_t w0 = start_index(ow, Q, W), w1 = end_index(ow, Q, W);
            T best = plane[h0 * sh + w0 * sw];
            int64_t best_at = h0 * W + w0;
            for (int64_t h = h0; h < h1; ++h)
              for (int64_t w = w0; w < w1; ++w) {
                const T v = plane[h * sh + w * sw];
                if (v > best || std::isnan(v)) best = v, best_at = h * W + w;  // the last NaN wins, as in PyTorch
              }
            y[(job * P + oh) * Q + ow] = best;
            idx[(job * P + oh) * Q + ow] = best_at;
          }
        }
      }
    });
  });
}

}  // namespace cohort::kernel
