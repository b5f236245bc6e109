// Batch normalisation forward and backward as plain loops over [N, C, S], one channel per job
// (channels are independent), two passes for the statistics. N batch, C channels, S spatial.
//
// Note [Batch norm fast path]
// When every [n, c] plane of x (and of dy) is one stride-1 run, a channel is N rows of S contiguous
// elements and the loops of vector_loops.h do the work, in the input's type, vectorised for the
// running CPU: float sums go through fixed float lanes into double (exact enough: the lanes are
// flushed every few thousand elements), double stays double (gradcheck). Any other layout takes
// the strided path below, which indexes through the plane's strides in double. Each channel is
// one thread's job, and its result depends only on the shape, never on the number of threads.
// bfloat16 and float16 compute in float32 (Note [Reduced floating dtypes] in src/ops/README.md):
// statistics in float32's lanes and double, the output rounded once. Note [Narrow batch norm] says
// how the usual case (a narrow input, float32 parameters) avoids float32 copies of whole tensors;
// the rest (narrow parameters or running statistics, strided planes) runs on float32 copies
// (`widen`/`into`), narrow running statistics updated in float32 and rounded back.
//
// Note [Narrow batch norm]
// A bfloat16 or float16 input whose channel is N stride-1 rows of S, with float32 (or no) weight,
// bias and running statistics (autocast's mixed batch norm), is converted one channel at a time
// into a float32 buffer of the thread; the float loops of the fast path work on that buffer and
// their result is rounded back row by row. The float loops see the same float32 values in the same
// order as on a widened copy of the whole tensor, so the results are those of the widened path bit
// for bit, without its float32 copies of the input, output (and dy, dx): a channel of ResNet-18 at
// batch 32 is at most 128 KB of float32 and stays in cache, where the whole-tensor copies are
// megabytes of extra traffic and allocations per layer.
// The statistics stay two passes (mean, then the sum of squared deviations), not a one-pass sum
// of squares: one channel's data is read again from cache (6 KB at 8x14x14, 128 KB at 32x32x32),
// so a fused pass would save little, and the two-pass variance cannot cancel catastrophically.
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "ops/cpu/batch_norm_kernels.h"
#include "ops/cpu/loops.h"
#include "ops/cpu/reduced.h"
#include "ops/cpu/vector_loops.h"

namespace cohort::kernel {

namespace {

// Strided access to element (n, c, s) of a tensor viewed as [N, C, S]: the trailing dims of an
// [N, C, ...] tensor are walked through their own strides.
struct Planes {
  int64_t N, C, S;
  std::vector<int64_t> inner_sizes, inner_strides;
  int64_t sn, sc;
  bool flat;  // the trailing dims are one stride-1 run
  explicit Planes(const Tensor& t) : N(t.size(0)), C(t.size(1)), S(1), sn(t.stride(0)), sc(t.stride(1)) {
    int64_t expected = 1;
    flat = true;
    for (int64_t d = t.dim() - 1; d >= 2; --d) {
      if (t.size(d) != 1 && t.stride(d) != expected) flat = false;
      expected *= t.size(d);
    }
    for (int64_t d = 2; d < t.dim(); ++d) {
      S *= t.size(d);
      inner_sizes.push_back(t.size(d));
      inner_strides.push_back(t.stride(d));
    }
  }
  int64_t offset(int64_t s) const {
    if (flat) return s;
    int64_t off = 0;
    for (int64_t d = static_cast<int64_t>(inner_sizes.size()) - 1; d >= 0; --d) {
      off += (s % inner_sizes[d]) * inner_strides[d];
      s /= inner_sizes[d];
    }
    return off;
  }
};

template <class T>
double at(const T* p, int64_t stride, int64_t i) { return static_cast<double>(p[i * stride]); }

// A batch norm's per-channel parameters and running statistics (each may be undefined) as pointers
// and strides, and the statistics of a channel from them.
template <class T>
struct ChannelParams {
  const T* w;
  const T* b;
  T* rm;
  T* rv;
  int64_t ws, bs, rms, rvs;

  ChannelParams(const Tensor& weight, const Tensor& bias, const Tensor& running_mean, const Tensor& running_var)
      : w(weight.defined() ? weight.data_ptr<T>() : nullptr),
        b(bias.defined() ? bias.data_ptr<T>() : nullptr),
        rm(running_mean.defined() ? running_mean.data_ptr<T>() : nullptr),
        rv(running_var.defined() ? running_var.data_ptr<T>() : nullptr),
        ws(w ? weight.stride(0) : 0),
        bs(b ? bias.stride(0) : 0),
        rms(rm ? running_mean.stride(0) : 0),
        rvs(rv ? running_var.stride(0) : 0) {}

  // Channel c's (mean, invstd) over M elements: in training its batch statistics (mean mu, sum of
  // squared deviations sq), which also move the running averages; else the running averages.
  std::pair<double, double> statistics(int64_t c, double mu, double sq, int64_t M, bool training, double momentum,
                                       double eps) const {
    if (!training) return {at(rm, rms, c), 1.0 / std::sqrt(at(rv, rvs, c) + eps)};
    if (rm) rm[c * rms] = static_cast<T>((1 - momentum) * at(rm, rms, c) + momentum * mu);
    if (rv) rv[c * rvs] = static_cast<T>((1 - momentum) * at(rv, rvs, c) + momentum * sq / static_cast<double>(M - 1));
    return {mu, 1.0 / std::sqrt(sq / static_cast<double>(M) + eps)};
  }
  double scale(int64_t c, double invstd) const { return invstd * (w ? at(w, ws, c) : 1.0); }
  double shift(int64_t c) const { return b ? at(b, bs, c) : 0.0; }
};

// Channels per thread at least: a thread's share of the ~3 passes over M elements per channel
// should be worth an OpenMP region (kParallelGrain elements).
int64_t channel_grain(int64_t M) { return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, 3 * M)); }

bool any_narrow(std::initializer_list<Tensor> ts) {
  for (const Tensor& t : ts)
    if (t.defined() && is_reduced_floating_point(t.dtype())) return true;
  return false;
}
Tensor widen_defined(const Tensor& t) { return t.defined() ? widen(t) : Tensor(); }
// A float32 stand-in for a narrow output, the output itself otherwise (undefined stays undefined).
Tensor float32_output(const Tensor& t) { return t.defined() && is_reduced_floating_point(t.dtype()) ? float32_like(t) : t; }
void round_into(const Tensor& narrow, const Tensor& wide) {
  if (narrow.defined() && !narrow.is_same(wide)) copy(narrow, wide);
}

// One channel (N rows of S, rows `row_stride` elements apart) of a narrow tensor into buf [N, S].
void gather_channel(float* buf, const uint16_t* channel, int64_t row_stride, DType dtype, int64_t N, int64_t S) {
  for (int64_t n = 0; n < N; ++n) vec::narrow_to_float(buf + n * S, channel + n * row_stride, dtype, S);
}
void scatter_channel(uint16_t* channel, int64_t row_stride, DType dtype, const float* buf, int64_t N, int64_t S) {
  for (int64_t n = 0; n < N; ++n) vec::float_to_narrow(channel + n * row_stride, buf + n * S, dtype, S);
}

bool float32_or_undefined(std::initializer_list<Tensor> ts) {
  for (const Tensor& t : ts)
    if (t.defined() && t.dtype() != kFloat32) return false;
  return true;
}

// Note [Narrow batch norm]: the forward of a narrow x with float32 parameters, when it applies.
bool forward_narrow_channels(const Tensor& out, const Tensor& mean, const Tensor& invstd, const Tensor& x,
                             const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                             const Tensor& running_var, bool training, double momentum, double eps) {
  if (!is_reduced_floating_point(x.dtype()) || out.dtype() != x.dtype() ||
      !float32_or_undefined({weight, bias, running_mean, running_var}))
    return false;
  const Planes g(x);
  const int64_t M = g.N * g.S;
  if (!g.flat || M == 0) return false;
  const DType dt = x.dtype();
  const auto* px = static_cast<const uint16_t*>(x.data_ptr());
  auto* py = static_cast<uint16_t*>(out.data_ptr());
  const ChannelParams<float> params(weight, bias, running_mean, running_var);
  double* pm = mean.data_ptr<double>();
  double* pi = invstd.data_ptr<double>();
  // The statistics and their use as batch_norm_forward's float fast path has them.
  parallel_for(g.C, channel_grain(M), [&](int64_t begin, int64_t end) {
    std::vector<float> xs(static_cast<size_t>(M)), ys(static_cast<size_t>(M));
    for (int64_t c = begin; c < end; ++c) {
      gather_channel(xs.data(), px + c * g.sc, g.sn, dt, g.N, g.S);
      double batch_mu = 0, sq = 0;
      if (training) {
        batch_mu = vec::channel_sum(xs.data(), g.S, g.N, g.S) / static_cast<double>(M);
        sq = vec::channel_sum_sq_dev(xs.data(), g.S, g.N, g.S, static_cast<float>(batch_mu));
      }
      const auto [mu, inv] = params.statistics(c, batch_mu, sq, M, training, momentum, eps);
      pm[c] = mu, pi[c] = inv;
      const double scale = params.scale(c, inv), shift = params.shift(c);
      vec::channel_normalize(ys.data(), g.S, xs.data(), g.S, g.N, g.S, static_cast<float>(mu),
                             static_cast<float>(scale), static_cast<float>(shift));
      scatter_channel(py + c * g.S, g.C * g.S, dt, ys.data(), g.N, g.S);
    }
  });
  return true;
}

// Note [Narrow batch norm]: the backward of a narrow x and dy with float32 (or no) weight.
bool backward_narrow_channels(const Tensor& dx, const Tensor& dweight, const Tensor& dbias, const Tensor& dy,
                              const Tensor& x, const Tensor& weight, const Tensor& mean, const Tensor& invstd,
                              bool training) {
  if (!is_reduced_floating_point(x.dtype()) || dy.dtype() != x.dtype() || (dx.defined() && dx.dtype() != x.dtype()) ||
      !float32_or_undefined({weight, dweight, dbias}))
    return false;
  const Planes gx(x), gy(dy);
  const int64_t M = gx.N * gx.S;
  if (!gx.flat || !gy.flat || M == 0) return false;
  const DType dt = x.dtype();
  const auto* px = static_cast<const uint16_t*>(x.data_ptr());
  const auto* pg = static_cast<const uint16_t*>(dy.data_ptr());
  auto* pdx = dx.defined() ? static_cast<uint16_t*>(dx.data_ptr()) : nullptr;
  const float* w = weight.defined() ? weight.data_ptr<float>() : nullptr;
  const int64_t ws = w ? weight.stride(0) : 0;
  float* pdw = dweight.defined() ? dweight.data_ptr<float>() : nullptr;
  float* pdb = dbias.defined() ? dbias.data_ptr<float>() : nullptr;
  const double* pm = mean.data_ptr<double>();
  const double* pi = invstd.data_ptr<double>();
  parallel_for(gx.C, channel_grain(M), [&](int64_t begin, int64_t end) {
    std::vector<float> xs(static_cast<size_t>(M)), gs(static_cast<size_t>(M)), ds(pdx ? static_cast<size_t>(M) : 0);
    for (int64_t c = begin; c < end; ++c) {
      gather_channel(xs.data(), px + c * gx.sc, gx.sn, dt, gx.N, gx.S);
      gather_channel(gs.data(), pg + c * gy.sc, gy.sn, dt, gx.N, gx.S);
      const double mu = pm[c], inv = pi[c];
      double sums[2];
      vec::channel_sum_g_dot(sums, gs.data(), gx.S, xs.data(), gx.S, gx.N, gx.S, static_cast<float>(mu));
      const double sum_dy = sums[0], sum_dy_xhat = sums[1] * inv;
      if (pdw) pdw[c] = static_cast<float>(sum_dy_xhat);
      if (pdb) pdb[c] = static_cast<float>(sum_dy);
      if (!pdx) continue;
      const double scale = inv * (w ? at(w, ws, c) : 1.0);
      const double mean_dy = training ? sum_dy / static_cast<double>(M) : 0.0;
      const double mean_dy_xhat = training ? sum_dy_xhat / static_cast<double>(M) : 0.0;
      vec::channel_backward_dx(ds.data(), gx.S, gs.data(), gx.S, xs.data(), gx.S, gx.N, gx.S, static_cast<float>(mu),
                               static_cast<float>(scale), static_cast<float>(scale * inv * mean_dy_xhat),
                               static_cast<float>(scale * mean_dy));
      scatter_channel(pdx + c * gx.S, gx.C * gx.S, dt, ds.data(), gx.N, gx.S);
    }
  });
  return true;
}

}  // namespace

void batch_norm_stats(const Tensor& mean, const Tensor& m2, const Tensor& x) {
  COHORT_ASSERT(x.is_contiguous() && mean.is_contiguous() && m2.is_contiguous());
  if (is_reduced_floating_point(x.dtype())) return batch_norm_stats(mean, m2, widen(x));
  const int64_t N = x.size(0), C = x.size(1), S = x.numel() / (N * C);
  dispatch_floating(x.dtype(), "batch_norm_stats", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_ptr<T>();
    double* pm = mean.data_ptr<double>();
    double* pv = m2.data_ptr<double>();
    parallel_for(C, channel_grain(N * S), [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) {
        const T* xc = px + c * S;
        pm[c] = vec::channel_sum(xc, C * S, N, S) / static_cast<double>(N * S);
        pv[c] = vec::channel_sum_sq_dev(xc, C * S, N, S, static_cast<T>(pm[c]));
      }
    });
  });
}

void batch_norm_forward(const Tensor& out, const Tensor& mean, const Tensor& invstd, const Tensor& x,
                        const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                        const Tensor& running_var, bool training, double momentum, double eps) {
  COHORT_ASSERT(out.is_contiguous() && mean.is_contiguous() && invstd.is_contiguous());
  if (forward_narrow_channels(out, mean, invstd, x, weight, bias, running_mean, running_var, training, momentum, eps))
    return;
  if (any_narrow({out, x, weight, bias, running_mean, running_var})) {
    // float32 parameters and running statistics are used (and updated) as they are.
    const Tensor rm = widen_defined(running_mean), rv = widen_defined(running_var), y = float32_output(out);
    batch_norm_forward(y, mean, invstd, widen(x), widen_defined(weight), widen_defined(bias), rm, rv, training,
                       momentum, eps);
    round_into(out, y);
    if (training) round_into(running_mean, rm), round_into(running_var, rv);
    return;
  }
  const Planes g(x);
  const int64_t M = g.N * g.S;
  dispatch_floating(x.dtype(), "batch_norm", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_ptr<T>();
    const ChannelParams<T> params(weight, bias, running_mean, running_var);
    T* y = out.data_ptr<T>();
    double* pm = mean.data_ptr<double>();
    double* pi = invstd.data_ptr<double>();
    const int64_t grain = channel_grain(M);
    auto statistics = [&](int64_t c, double mu, double sq) {
      return params.statistics(c, mu, sq, M, training, momentum, eps);
    };
    if (g.flat) {  // Note [Batch norm fast path]
      parallel_for(g.C, grain, [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) {
          const T* xc = px + c * g.sc;
          double batch_mu = 0, sq = 0;
          if (training) {
            batch_mu = vec::channel_sum(xc, g.sn, g.N, g.S) / static_cast<double>(M);
            sq = vec::channel_sum_sq_dev(xc, g.sn, g.N, g.S, static_cast<T>(batch_mu));
          }
          const auto [mu, inv] = statistics(c, batch_mu, sq);
          pm[c] = mu, pi[c] = inv;
          const double scale = params.scale(c, inv), shift = params.shift(c);
          vec::channel_normalize(y + c * g.S, g.C * g.S, xc, g.sn, g.N, g.S, static_cast<T>(mu),
                                 static_cast<T>(scale), static_cast<T>(shift));
        }
      });
      return;
    }
    parallel_for(g.C, grain, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> offs(static_cast<size_t>(g.S));
      for (int64_t s = 0; s < g.S; ++s) offs[s] = g.offset(s);
      for (int64_t c = begin; c < end; ++c) {
        const T* xc = px + c * g.sc;
        double batch_mu = 0, sq = 0;
        if (training) {
          double sum = 0;
          for (int64_t n = 0; n < g.N; ++n)
            for (int64_t s = 0; s < g.S; ++s) sum += static_cast<double>(xc[n * g.sn + offs[s]]);
          batch_mu = sum / static_cast<double>(M);
          for (int64_t n = 0; n < g.N; ++n)
            for (int64_t s = 0; s < g.S; ++s) {
              const double d = static_cast<double>(xc[n * g.sn + offs[s]]) - batch_mu;
              sq += d * d;
            }
        }
        const auto [mu, inv] = statistics(c, batch_mu, sq);
        pm[c] = mu, pi[c] = inv;
        const double scale = params.scale(c, inv), shift = params.shift(c) - mu * scale;
        for (int64_t n = 0; n < g.N; ++n) {
          T* yc = y + (n * g.C + c) * g.S;
          for (int64_t s = 0; s < g.S; ++s) yc[s] = static_cast<T>(static_cast<double>(xc[n * g.sn + offs[s]]) * scale + shift);
        }
      }
    });
  });
}

void batch_norm_backward(const Tensor& dx, const Tensor& dweight, const Tensor& dbias, const Tensor& dy,
                         const Tensor& x, const Tensor& weight, const Tensor& mean, const Tensor& invstd,
                         bool training) {
  COHORT_ASSERT((!dx.defined() || dx.is_contiguous()) && (!dweight.defined() || dweight.is_contiguous()) &&
                (!dbias.defined() || dbias.is_contiguous()));
  if (backward_narrow_channels(dx, dweight, dbias, dy, x, weight, mean, invstd, training)) return;
  if (any_narrow({dx, dweight, dbias, dy, x, weight})) {
    const Tensor wdx = float32_output(dx), wdw = float32_output(dweight), wdb = float32_output(dbias);
    batch_norm_backward(wdx, wdw, wdb, widen(dy), widen(x), widen_defined(weight), mean, invstd, training);
    round_into(dx, wdx), round_into(dweight, wdw), round_into(dbias, wdb);
    return;
  }
  const Planes gx(x), gy(dy);
  const int64_t M = gx.N * gx.S;
  dispatch_floating(x.dtype(), "batch_norm_backward", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_ptr<T>();
    const T* pg = dy.data_ptr<T>();
    const T* w = weight.defined() ? weight.data_ptr<T>() : nullptr;
    const int64_t ws = w ? weight.stride(0) : 0;
    T* pdx = dx.defined() ? dx.data_ptr<T>() : nullptr;
    T* pdw = dweight.defined() ? dweight.data_ptr<T>() : nullptr;
    T* pdb = dbias.defined() ? dbias.data_ptr<T>() : nullptr;
    const double* pm = mean.data_ptr<double>();
    const double* pi = invstd.data_ptr<double>();
    const int64_t grain = channel_grain(M);
    if (gx.flat && gy.flat) {  // Note [Batch norm fast path]
      parallel_for(gx.C, grain, [&](int64_t begin, int64_t end) {
        for (int64_t c = begin; c < end; ++c) {
          const T* xc = px + c * gx.sc;
          const T* gc = pg + c * gy.sc;
          const double mu = pm[c], inv = pi[c];
          double sums[2];  // sum of dy, sum of dy * (x - mu)
          vec::channel_sum_g_dot(sums, gc, gy.sn, xc, gx.sn, gx.N, gx.S, static_cast<T>(mu));
          const double sum_dy = sums[0], sum_dy_xhat = sums[1] * inv;
          if (pdw) pdw[c] = static_cast<T>(sum_dy_xhat);
          if (pdb) pdb[c] = static_cast<T>(sum_dy);
          if (!pdx) continue;
          const double scale = inv * (w ? at(w, ws, c) : 1.0);
          // dx = scale * (dy - mean_dy - xhat * mean_dy_xhat), xhat = (x - mu) * inv.
          const double mean_dy = training ? sum_dy / static_cast<double>(M) : 0.0;
          const double mean_dy_xhat = training ? sum_dy_xhat / static_cast<double>(M) : 0.0;
          vec::channel_backward_dx(pdx + c * gx.S, gx.C * gx.S, gc, gy.sn, xc, gx.sn, gx.N, gx.S, static_cast<T>(mu),
                                   static_cast<T>(scale), static_cast<T>(scale * inv * mean_dy_xhat),
                                   static_cast<T>(scale * mean_dy));
        }
      });
      return;
    }
    parallel_for(gx.C, grain, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> xo(static_cast<size_t>(gx.S)), yo(static_cast<size_t>(gx.S));
      for (int64_t s = 0; s < gx.S; ++s) xo[s] = gx.offset(s), yo[s] = gy.offset(s);
      for (int64_t c = begin; c < end; ++c) {
        const T* xc = px + c * gx.sc;
        const T* gc = pg + c * gy.sc;
        const double mu = pm[c], inv = pi[c];
        double sum_dy = 0, sum_dy_xhat = 0;
        for (int64_t n = 0; n < gx.N; ++n)
          for (int64_t s = 0; s < gx.S; ++s) {
            const double g = static_cast<double>(gc[n * gy.sn + yo[s]]);
            sum_dy += g;
            sum_dy_xhat += g * (static_cast<double>(xc[n * gx.sn + xo[s]]) - mu) * inv;
          }
        if (pdw) pdw[c] = static_cast<T>(sum_dy_xhat);
        if (pdb) pdb[c] = static_cast<T>(sum_dy);
        if (!pdx) continue;
        const double scale = inv * (w ? at(w, ws, c) : 1.0);
        // With batch statistics the mean and variance depend on x: subtract their share.
        const double mean_dy = training ? sum_dy / static_cast<double>(M) : 0.0;
        const double mean_dy_xhat = training ? sum_dy_xhat / static_cast<double>(M) : 0.0;
        for (int64_t n = 0; n < gx.N; ++n) {
          T* dxc = pdx + (n * gx.C + c) * gx.S;
          for (int64_t s = 0; s < gx.S; ++s) {
            const double xhat = (static_cast<double>(xc[n * gx.sn + xo[s]]) - mu) * inv;
            dxc[s] = static_cast<T>(scale * (static_cast<double>(gc[n * gy.sn + yo[s]]) - mean_dy - xhat * mean_dy_xhat));
          }
        }
      }
    });
  });
}

}  // namespace cohort::kernel
