// 2-d max pooling forward, every floating dtype, with the argmax of each window (int64, flat h * W + w
// within the plane, as PyTorch's indices) for the backward.
//
// Note [Max pooling loops]
// On an AVX2 CPU oneDNN 2.6 pools plain nchw tensors with its generic "simple_nchw" loops, which took
// 9.5 ms for one 2x2 pool of the blitz CNN at batch 256 (a fifth of the training step on the AVX2
// EPYC) where these loops take about 1 ms. Max pooling is a
// pass over memory, so plain loops that the compiler can keep in registers are as fast as a JIT:
// each output row first clips its window to the input once (no test per tap), the common 2x2 /
// stride 2 window without padding or dilation has a branch-free body, and every other geometry
// walks its clipped window. NaN propagates as in PyTorch: a window holding NaN has the maximum NaN,
// and its index is the last NaN's (PyTorch 1.13's loop takes every NaN it meets).
// One job per (n, c) plane, so the result does not depend on the number of threads.
#include <cmath>
#include <limits>

#include "cohort/ops/creation.h"
#include "ops/cpu/loops.h"
#include "ops/cpu/pooling_kernels.h"
#include "ops/cpu/reduced.h"
#include "ops/cpu/vector_loops.h"

namespace cohort::kernel {

namespace {

// The taps k of a window starting at `start` (step `dilation`) that land inside [0, size): [lo, hi).
struct Taps {
  int64_t lo, hi;
  Taps(int64_t start, int64_t kernel, int64_t dilation, int64_t size) {
    lo = start >= 0 ? 0 : (-start + dilation - 1) / dilation;
    hi = start + (kernel - 1) * dilation < size ? kernel : (size - 1 - start) / dilation + 1;
    if (hi < lo) hi = lo;
  }
};

// Any window: the maximum without branches on the data, then the first tap that holds it (the last
// NaN, when there is one).
template <class T>
void max_window(const T* x, int64_t sh, int64_t sw, int64_t W, int64_t h0, int64_t w0, const Taps& rows,
                const Taps& cols, const Pool2dParams& p, T& y, int64_t& idx) {
  T best = -std::numeric_limits<T>::infinity();
  bool nan = false;
  for (int64_t kh = rows.lo; kh < rows.hi; ++kh) {
    const T* row = x + (h0 + kh * p.dilation[0]) * sh;
    for (int64_t kw = cols.lo; kw < cols.hi; ++kw) {
      const T v = row[(w0 + kw * p.dilation[1]) * sw];
      best = v > best ? v : best;
      nan = nan || v != v;
    }
  }
  y = best, idx = -1;  // an empty window: only with padding wider than the kernel, which the op refuses
  for (int64_t kh = rows.lo; kh < rows.hi; ++kh) {
    const int64_t h = h0 + kh * p.dilation[0];
    for (int64_t kw = cols.lo; kw < cols.hi; ++kw) {
      const int64_t w = w0 + kw * p.dilation[1];
      const T v = x[h * sh + w * sw];
      if (nan ? v != v : v == best) {
        y = v, idx = h * W + w;
        if (!nan) return;
      }
    }
  }
}

template <class T>
void pool_plane(const T* x, int64_t sh, int64_t sw, int64_t H, int64_t W, T* y, int64_t* idx, int64_t P, int64_t Q,
                const Pool2dParams& p) {
  const bool two_by_two = p.kernel[0] == 2 && p.kernel[1] == 2 && p.stride[0] == 2 && p.stride[1] == 2 &&
                          p.padding[0] == 0 && p.padding[1] == 0 && p.dilation[0] == 1 && p.dilation[1] == 1 &&
                          sw == 1 && 2 * P <= H && 2 * Q <= W;
  if (two_by_two && vec::max_pool_plane_2x2(y, idx, x, P, Q, sh, W)) return;
  for (int64_t oh = 0; oh < P; ++oh, y += Q, idx += Q) {
    const int64_t h0 = oh * p.stride[0] - p.padding[0];
    const Taps rows(h0, p.kernel[0], p.dilation[0], H);
    for (int64_t ow = 0; ow < Q; ++ow) {
      const int64_t w0 = ow * p.stride[1] - p.padding[1];
      max_window(x, sh, sw, W, h0, w0, rows, Taps(w0, p.kernel[1], p.dilation[1], W), p, y[ow], idx[ow]);
    }
  }
}

}  // namespace

Tensor max_pool2d_forward(const Tensor& out, const Tensor& in, const Pool2dParams& p) {
  COHORT_ASSERT(out.is_contiguous());
  if (is_reduced_floating_point(in.dtype())) {  // on a float32 copy, where the max is exact
    const Tensor x = widen(in);
    Tensor indices;
    into(out, [&](const Tensor& o) { indices = max_pool2d_forward(o, x, p); });
    return indices;
  }
  Tensor indices = empty(out.sizes(), TensorOptions(kInt64).device(out.device()));
  const int64_t C = in.size(1), H = in.size(2), W = in.size(3), P = out.size(2), Q = out.size(3);
  if (out.numel() == 0) return indices;
  dispatch_floating(in.dtype(), "max_pool2d", [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.data_ptr<T>();
    T* y = out.data_ptr<T>();
    int64_t* idx = indices.data_ptr<int64_t>();
    const int64_t work = P * Q * p.kernel[0] * p.kernel[1];
    const int64_t sn = in.stride(0), sc = in.stride(1), sh = in.stride(2), sw = in.stride(3);
    parallel_for(in.size(0) * C, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, work)),
                 [&](int64_t begin, int64_t end) {
      for (int64_t job = begin; job < end; ++job) {
        const T* plane = x + (job / C) * sn + (job % C) * sc;
        pool_plane(plane, sh, sw, H, W, y + job * P * Q, idx + job * P * Q, P, Q, p);
      }
    });
  });
  return indices;
}

}  // namespace cohort::kernel
