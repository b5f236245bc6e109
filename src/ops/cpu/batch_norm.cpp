// Batch normalisation forward and backward as plain loops over [N, C, S], one channel per job
// (channels are independent), two passes for the statistics. N batch, C channels, S spatial.
// Planes with contiguous spatial values (every NCHW tensor) take loops without index arithmetic,
// per-element work in T (vectorised) and sums in double; other strides walk an offset table.
#include <cmath>
#include <tuple>
#include <utility>
#include <vector>

#include "ops/cpu/batch_norm_kernels.h"
#include "ops/cpu/loops.h"

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

// Sum of f(x[i]) over one contiguous plane, in double with four accumulators (independent chains the
// CPU overlaps); a fixed order, so results do not depend on the thread count.
template <class T, class F>
double plane_sum(const T* p, int64_t n, F&& f) {
  double a0 = 0, a1 = 0, a2 = 0, a3 = 0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    a0 += f(i), a1 += f(i + 1);
    a2 += f(i + 2), a3 += f(i + 3);
  }
  for (; i < n; ++i) a0 += f(i);
  return (a0 + a1) + (a2 + a3);
}

// Mean and sum of squared deviations of channel c over the N planes of S contiguous values at
// stride sn: two passes (no cancellation however far the mean is from zero).
template <class T>
std::pair<double, double> channel_moments(const T* xc, int64_t N, int64_t S, int64_t sn) {
  double sum = 0;
  for (int64_t n = 0; n < N; ++n) {
    const T* p = xc + n * sn;
    sum += plane_sum(p, S, [p](int64_t i) { return static_cast<double>(p[i]); });
  }
  const double mu = sum / static_cast<double>(N * S);
  double m2 = 0;
  for (int64_t n = 0; n < N; ++n) {
    const T* p = xc + n * sn;
    m2 += plane_sum(p, S, [p, mu](int64_t i) {
      const double d = static_cast<double>(p[i]) - mu;
      return d * d;
    });
  }
  return {mu, m2};
}

// Channels per parallel job: enough elements per job to be worth a thread.
int64_t channel_grain(int64_t elements_per_channel) {
  return std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, 3 * elements_per_channel));
}

}  // namespace

void batch_norm_stats(const Tensor& mean, const Tensor& m2, const Tensor& x) {
  COHORT_ASSERT(x.is_contiguous() && mean.is_contiguous() && m2.is_contiguous());
  const int64_t N = x.size(0), C = x.size(1), S = x.numel() / (N * C);
  dispatch_floating(x.dtype(), "batch_norm_stats", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_ptr<T>();
    double* pm = mean.data_ptr<double>();
    double* pv = m2.data_ptr<double>();
    parallel_for(C, channel_grain(N * S), [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c) std::tie(pm[c], pv[c]) = channel_moments(px + c * S, N, S, C * S);
    });
  });
}

void batch_norm_forward(const Tensor& out, const Tensor& mean, const Tensor& invstd, const Tensor& x,
                        const Tensor& weight, const Tensor& bias, const Tensor& running_mean,
                        const Tensor& running_var, bool training, double momentum, double eps) {
  COHORT_ASSERT(out.is_contiguous() && mean.is_contiguous() && invstd.is_contiguous());
  const Planes g(x);
  const int64_t M = g.N * g.S;
  dispatch_floating(x.dtype(), "batch_norm", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_ptr<T>();
    const T* w = weight.defined() ? weight.data_ptr<T>() : nullptr;
    const T* b = bias.defined() ? bias.data_ptr<T>() : nullptr;
    T* rm = running_mean.defined() ? running_mean.data_ptr<T>() : nullptr;
    T* rv = running_var.defined() ? running_var.data_ptr<T>() : nullptr;
    const int64_t ws = w ? weight.stride(0) : 0, bs = b ? bias.stride(0) : 0;
    const int64_t rms = rm ? running_mean.stride(0) : 0, rvs = rv ? running_var.stride(0) : 0;
    T* y = out.data_ptr<T>();
    double* pm = mean.data_ptr<double>();
    double* pi = invstd.data_ptr<double>();
    parallel_for(g.C, channel_grain(M), [&](int64_t begin, int64_t end) {
      std::vector<int64_t> offs(g.flat ? 0 : static_cast<size_t>(g.S));
      for (size_t s = 0; s < offs.size(); ++s) offs[s] = g.offset(static_cast<int64_t>(s));
      for (int64_t c = begin; c < end; ++c) {
        const T* xc = px + c * g.sc;
        double mu, inv;
        if (training && g.flat) {
          double sq;
          std::tie(mu, sq) = channel_moments(xc, g.N, g.S, g.sn);
          inv = 1.0 / std::sqrt(sq / static_cast<double>(M) + eps);
          if (rm) rm[c * rms] = static_cast<T>((1 - momentum) * at(rm, rms, c) + momentum * mu);
          if (rv) rv[c * rvs] = static_cast<T>((1 - momentum) * at(rv, rvs, c) +
                                               momentum * sq / static_cast<double>(M - 1));
        } else if (training) {
          double sum = 0;
          for (int64_t n = 0; n < g.N; ++n)
            for (int64_t s = 0; s < g.S; ++s) sum += static_cast<double>(xc[n * g.sn + offs[s]]);
          mu = sum / static_cast<double>(M);
          double sq = 0;
          for (int64_t n = 0; n < g.N; ++n)
            for (int64_t s = 0; s < g.S; ++s) {
              const double d = static_cast<double>(xc[n * g.sn + offs[s]]) - mu;
              sq += d * d;
            }
          const double var = sq / static_cast<double>(M);
          inv = 1.0 / std::sqrt(var + eps);
          if (rm) rm[c * rms] = static_cast<T>((1 - momentum) * at(rm, rms, c) + momentum * mu);
          if (rv) rv[c * rvs] = static_cast<T>((1 - momentum) * at(rv, rvs, c) +
                                               momentum * sq / static_cast<double>(M - 1));
        } else {
          mu = at(rm, rms, c);
          inv = 1.0 / std::sqrt(at(rv, rvs, c) + eps);
        }
        pm[c] = mu, pi[c] = inv;
        const double scale = inv * (w ? at(w, ws, c) : 1.0), shift = (b ? at(b, bs, c) : 0.0) - mu * scale;
        if (g.flat) {  // y = x * scale + shift in T: a loop the compiler vectorises
          const T ts = static_cast<T>(scale), tb = static_cast<T>(shift);
          for (int64_t n = 0; n < g.N; ++n) {
            T* yc = y + (n * g.C + c) * g.S;
            const T* xn = xc + n * g.sn;
            for (int64_t s = 0; s < g.S; ++s) yc[s] = xn[s] * ts + tb;
          }
          continue;
        }
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
    const bool flat = gx.flat && gy.flat;
    parallel_for(gx.C, channel_grain(M), [&](int64_t begin, int64_t end) {
      std::vector<int64_t> xo(flat ? 0 : static_cast<size_t>(gx.S)), yo(xo.size());
      for (size_t s = 0; s < xo.size(); ++s)
        xo[s] = gx.offset(static_cast<int64_t>(s)), yo[s] = gy.offset(static_cast<int64_t>(s));
      for (int64_t c = begin; c < end; ++c) {
        const T* xc = px + c * gx.sc;
        const T* gc = pg + c * gy.sc;
        const double mu = pm[c], inv = pi[c];
        if (flat) {
          // Sums in double over contiguous planes; then dx = a g + b x + k, per element in T.
          double sum_dy = 0, sum_dy_xc = 0;
          for (int64_t n = 0; n < gx.N; ++n) {
            const T* xn = xc + n * gx.sn;
            const T* gn = gc + n * gy.sn;
            sum_dy += plane_sum(gn, gx.S, [gn](int64_t i) { return static_cast<double>(gn[i]); });
            sum_dy_xc += plane_sum(gn, gx.S, [gn, xn, mu](int64_t i) {
              return static_cast<double>(gn[i]) * (static_cast<double>(xn[i]) - mu);
            });
          }
          const double sum_dy_xhat = sum_dy_xc * inv;
          if (pdw) pdw[c] = static_cast<T>(sum_dy_xhat);
          if (pdb) pdb[c] = static_cast<T>(sum_dy);
          if (!pdx) continue;
          const double scale = inv * (w ? at(w, ws, c) : 1.0);
          const double mean_dy = training ? sum_dy / static_cast<double>(M) : 0.0;
          const double mean_dy_xhat = training ? sum_dy_xhat / static_cast<double>(M) : 0.0;
          // scale (g - mean_dy - (x - mu) inv mean_dy_xhat) = a g + b x + k
          const double bx = -scale * inv * mean_dy_xhat;
          const T a = static_cast<T>(scale), b = static_cast<T>(bx), k = static_cast<T>(-scale * mean_dy - bx * mu);
          for (int64_t n = 0; n < gx.N; ++n) {
            T* dxc = pdx + (n * gx.C + c) * gx.S;
            const T* xn = xc + n * gx.sn;
            const T* gn = gc + n * gy.sn;
            for (int64_t s = 0; s < gx.S; ++s) dxc[s] = a * gn[s] + b * xn[s] + k;
          }
          continue;
        }
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
