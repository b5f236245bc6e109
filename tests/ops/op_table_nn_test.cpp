// Op-table rows for the ops layers are made of: conv1d/conv2d (groups, stride, padding, dilation,
// "same" with even kernels, unbatched inputs), conv_transpose1d/2d (output_padding allowed by the
// stride or only by the dilation, groups, unbatched inputs), the max/avg/adaptive pools (ceil_mode,
// count_include_pad, indices), batch_norm (training with its running statistics, evaluation, no
// affine), embedding, and nn::functional's composed layer_norm and group_norm. Each reference is a
// plain loop over the output elements.
#include "cohort/nn/functional/activation.h"
#include "cohort/nn/functional/normalization.h"
#include "cohort/ops/convolution.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/embedding.h"
#include "cohort/ops/normalization.h"
#include "cohort/ops/pooling.h"
#include "support/op_table.h"

#include <cmath>

namespace cohort::testing {
namespace {

namespace F = nn::functional;
using Idx = std::vector<int64_t>;
using S = std::vector<std::vector<Shape>>;

// [C, ...] gets a batch dim of 1 and loses it again.
Nd batched(Nd x, int64_t dims) {
  if (x.dim() == dims - 1) x.shape.insert(x.shape.begin(), 1);
  return x;
}
Nd like_input(Nd out, const Nd& input, int64_t dims) {
  if (input.dim() == dims - 1) out.shape.erase(out.shape.begin());
  return out;
}

// ---- convolution ------------------------------------------------------------------------------

struct ConvGeometry {
  Idx stride{1, 1}, pad_lo{0, 0}, pad_hi{0, 0}, dilation{1, 1};
  int64_t groups = 1;
};

// x [N, C, H, W] or [C, H, W], w [O, C / groups, kH, kW], b [O] or null.
Nd conv2d_ref(const Nd& input, const Nd& w, const Nd* b, const ConvGeometry& g) {
  const Nd x = batched(input, 4);
  const int64_t N = x.size(0), H = x.size(2), W = x.size(3), O = w.size(0), Cg = w.size(1), kH = w.size(2),
                kW = w.size(3);
  const int64_t P = (H + g.pad_lo[0] + g.pad_hi[0] - g.dilation[0] * (kH - 1) - 1) / g.stride[0] + 1;
  const int64_t Q = (W + g.pad_lo[1] + g.pad_hi[1] - g.dilation[1] * (kW - 1) - 1) / g.stride[1] + 1;
  Nd out = build({N, O, P, Q}, [&](const Idx& i) {
    const int64_t group = i[1] / (O / g.groups);
    double acc = b ? b->v[i[1]] : 0;
    for (int64_t c = 0; c < Cg; ++c)
      for (int64_t r = 0; r < kH; ++r)
        for (int64_t s = 0; s < kW; ++s) {
          const int64_t h = i[2] * g.stride[0] - g.pad_lo[0] + r * g.dilation[0];
          const int64_t v = i[3] * g.stride[1] - g.pad_lo[1] + s * g.dilation[1];
          if (h >= 0 && h < H && v >= 0 && v < W) acc += x.at({i[0], group * Cg + c, h, v}) * w.at({i[1], c, r, s});
        }
    return acc;
  });
  return like_input(out, input, 4);
}

// conv1d as conv2d with an H of 1: x [N, C, L] or [C, L], w [O, C / groups, k]; g holds the W dim's
// geometry in its second entries.
Nd conv1d_ref(Nd x, Nd w, const Nd* b, const ConvGeometry& g) {
  x.shape.insert(x.shape.end() - 1, 1);
  w.shape.insert(w.shape.end() - 1, 1);
  Nd out = conv2d_ref(x, w, b, g);
  out.shape.erase(out.shape.end() - 2);
  return out;
}

OpRow conv_row(std::string name, S samples, std::function<Tensor(const In&)> op, ConvGeometry g, bool one_d) {
  return {.name = std::move(name),
          .samples = std::move(samples),
          .op = [op](const In& x) { return Out{op(x)}; },
          .ref = [g, one_d](const Refs& x) {
            const Nd* b = x.size() > 2 ? &x[2] : nullptr;
            return Refs{one_d ? conv1d_ref(x[0], x[1], b, g) : conv2d_ref(x[0], x[1], b, g)};
          }};
}

// Transposed convolution as its definition reads: output (y, x) gathers every input (h, v) and tap
// (r, s) with h * stride - padding + r * dilation = y (and the same for x). x [N, C, H, W] or
// [C, H, W], w [C, O / groups, kH, kW], b [O] or null; g.pad_hi holds the output_padding.
Nd conv_transpose2d_ref(const Nd& input, const Nd& w, const Nd* b, const ConvGeometry& g) {
  const Nd x = batched(input, 4);
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3), Og = w.size(1), kH = w.size(2),
                kW = w.size(3), Cg = C / g.groups;
  const int64_t P = (H - 1) * g.stride[0] - 2 * g.pad_lo[0] + g.dilation[0] * (kH - 1) + g.pad_hi[0] + 1;
  const int64_t Q = (W - 1) * g.stride[1] - 2 * g.pad_lo[1] + g.dilation[1] * (kW - 1) + g.pad_hi[1] + 1;
  Nd out = build({N, Og * g.groups, P, Q}, [&](const Idx& i) {
    const int64_t group = i[1] / Og, o = i[1] % Og;
    double acc = b ? b->v[i[1]] : 0;
    for (int64_t c = group * Cg; c < (group + 1) * Cg; ++c)
      for (int64_t r = 0; r < kH; ++r)
        for (int64_t s = 0; s < kW; ++s) {
          const int64_t hs = i[2] + g.pad_lo[0] - r * g.dilation[0], vs = i[3] + g.pad_lo[1] - s * g.dilation[1];
          if (hs < 0 || vs < 0 || hs % g.stride[0] != 0 || vs % g.stride[1] != 0) continue;
          const int64_t h = hs / g.stride[0], v = vs / g.stride[1];
          if (h < H && v < W) acc += x.at({i[0], c, h, v}) * w.at({c, o, r, s});
        }
    return acc;
  });
  return like_input(out, input, 4);
}

// stride, padding (pad_lo), output_padding (pad_hi), dilation, groups; for 1-d the second entries.
OpRow conv_transpose_row(std::string name, S samples, std::function<Tensor(const In&)> op, ConvGeometry g, bool one_d) {
  return {.name = std::move(name),
          .samples = std::move(samples),
          .op = [op](const In& x) { return Out{op(x)}; },
          .ref = [g, one_d](const Refs& x) {
            const Nd* b = x.size() > 2 ? &x[2] : nullptr;
            if (!one_d) return Refs{conv_transpose2d_ref(x[0], x[1], b, g)};
            Nd in = x[0], w = x[1];
            in.shape.insert(in.shape.end() - 1, 1);
            w.shape.insert(w.shape.end() - 1, 1);
            Nd out = conv_transpose2d_ref(in, w, b, g);
            out.shape.erase(out.shape.end() - 2);
            return Refs{out};
          }};
}

// ---- pooling ----------------------------------------------------------------------------------

struct PoolGeometry {
  Idx kernel, stride, padding{0, 0}, dilation{1, 1};
  bool ceil_mode = false;
  bool count_include_pad = true;
};

// PyTorch's output size: ceil_mode rounds up but drops a window starting in the right padding.
int64_t pooled_size(int64_t size, int64_t k, int64_t s, int64_t pad, int64_t dil, bool ceil_mode) {
  const int64_t room = size + 2 * pad - dil * (k - 1) - 1;
  int64_t n = (ceil_mode ? (room + s - 1) / s : room / s) + 1;
  if (ceil_mode && (n - 1) * s >= size + pad) --n;
  return n;
}

// The values and flat (h * W + w) argmax of each window; the first maximum in window order wins,
// and a NaN beats everything, the last NaN of the window giving the index (PyTorch 1.13's CPU loop).
Refs max_pool_ref(const Nd& input, const PoolGeometry& g) {
  const Nd x = batched(input, 4);
  const int64_t H = x.size(2), W = x.size(3);
  const Shape shape{x.size(0), x.size(1), pooled_size(H, g.kernel[0], g.stride[0], g.padding[0], g.dilation[0], g.ceil_mode),
                    pooled_size(W, g.kernel[1], g.stride[1], g.padding[1], g.dilation[1], g.ceil_mode)};
  Nd values = zeros_nd(shape), indices = zeros_nd(shape, kInt64);
  for (int64_t flat = 0; flat < values.numel(); ++flat) {
    const Idx i = unravel(shape, flat);
    double best = -INFINITY;
    int64_t at = -1;
    for (int64_t r = 0; r < g.kernel[0]; ++r)
      for (int64_t s = 0; s < g.kernel[1]; ++s) {
        const int64_t h = i[2] * g.stride[0] - g.padding[0] + r * g.dilation[0];
        const int64_t v = i[3] * g.stride[1] - g.padding[1] + s * g.dilation[1];
        if (h < 0 || h >= H || v < 0 || v >= W) continue;
        const double value = x.at({i[0], i[1], h, v});
        if (at < 0 || value > best || std::isnan(value)) best = value, at = h * W + v;
      }
    values.v[flat] = best, indices.v[flat] = static_cast<double>(at);
  }
  return {like_input(values, input, 4), like_input(indices, input, 4)};
}

Nd avg_pool_ref(const Nd& input, const PoolGeometry& g) {
  const Nd x = batched(input, 4);
  const int64_t H = x.size(2), W = x.size(3);
  const Shape shape{x.size(0), x.size(1), pooled_size(H, g.kernel[0], g.stride[0], g.padding[0], 1, g.ceil_mode),
                    pooled_size(W, g.kernel[1], g.stride[1], g.padding[1], 1, g.ceil_mode)};
  Nd out = build(shape, [&](const Idx& i) {
    // The window clipped to the padded input (its size is the divisor with count_include_pad), then
    // to the input itself.
    const int64_t h0 = i[2] * g.stride[0] - g.padding[0], v0 = i[3] * g.stride[1] - g.padding[1];
    const int64_t h1 = std::min(h0 + g.kernel[0], H + g.padding[0]), v1 = std::min(v0 + g.kernel[1], W + g.padding[1]);
    const int64_t padded = (h1 - h0) * (v1 - v0);
    const int64_t hs = std::max<int64_t>(h0, 0), he = std::min(h1, H), vs = std::max<int64_t>(v0, 0), ve = std::min(v1, W);
    double sum = 0;
    for (int64_t h = hs; h < he; ++h)
      for (int64_t v = vs; v < ve; ++v) sum += x.at({i[0], i[1], h, v});
    return sum / static_cast<double>(g.count_include_pad ? padded : (he - hs) * (ve - vs));
  });
  return like_input(out, input, 4);
}

// Adaptive windows: output i of P covers [floor(i H / P), ceil((i + 1) H / P)). max: values and indices
// (NaN as in max_pool_ref).
Refs adaptive_pool_ref(const Nd& input, Idx size, bool max) {
  const Nd x = batched(input, 4);
  const int64_t H = x.size(2), W = x.size(3), P = size[0], Q = size[1];
  const Shape shape{x.size(0), x.size(1), P, Q};
  Nd values = zeros_nd(shape), indices = zeros_nd(shape, kInt64);
  for (int64_t flat = 0; flat < values.numel(); ++flat) {
    const Idx i = unravel(shape, flat);
    const int64_t hs = i[2] * H / P, he = ((i[2] + 1) * H + P - 1) / P;
    const int64_t vs = i[3] * W / Q, ve = ((i[3] + 1) * W + Q - 1) / Q;
    double acc = max ? -INFINITY : 0;
    int64_t at = -1;
    for (int64_t h = hs; h < he; ++h)
      for (int64_t v = vs; v < ve; ++v) {
        const double value = x.at({i[0], i[1], h, v});
        if (!max) acc += value;
        else if (at < 0 || value > acc || std::isnan(value)) acc = value, at = h * W + v;
      }
    values.v[flat] = max ? acc : acc / static_cast<double>((he - hs) * (ve - vs));
    indices.v[flat] = static_cast<double>(at);
  }
  if (!max) return {like_input(values, input, 4)};
  return {like_input(values, input, 4), like_input(indices, input, 4)};
}

OpRow pool_row(std::string name, S samples, std::function<Out(const In&)> op, RefFn ref) {
  return {.name = std::move(name), .samples = std::move(samples), .op = std::move(op), .ref = std::move(ref)};
}

// ---- normalisation ----------------------------------------------------------------------------

constexpr double kEps = 1e-5, kMomentum = 0.1;

// Running statistics to start from, per channel: mean 0.1 c - 0.2, variance 0.5 + 0.25 c.
double running_mean0(int64_t c) { return 0.1 * static_cast<double>(c) - 0.2; }
double running_var0(int64_t c) { return 0.5 + 0.25 * static_cast<double>(c); }
Tensor running_stats(int64_t C, double (*f)(int64_t), const Tensor& like) {
  std::vector<double> v;
  for (int64_t c = 0; c < C; ++c) v.push_back(f(c));
  return tensor(v, like.options());
}

// Per channel of x [N, C, ...]: (x - mean) / sqrt(var + eps) * w + b with the batch's mean and biased
// variance (training, also returning the updated running statistics) or the running ones.
Refs batch_norm_ref(const Nd& x, const Nd* w, const Nd* b, bool training) {
  const int64_t C = x.size(1), count = x.numel() / C;
  std::vector<double> mean(C, 0), var(C, 0);
  for (int64_t flat = 0; flat < x.numel(); ++flat) mean[unravel(x.shape, flat)[1]] += x.v[flat] / count;
  for (int64_t flat = 0; flat < x.numel(); ++flat) {
    const int64_t c = unravel(x.shape, flat)[1];
    var[c] += (x.v[flat] - mean[c]) * (x.v[flat] - mean[c]) / count;
  }
  Nd y = build(x.shape, [&](const Idx& i) {
    const int64_t c = i[1];
    const double m = training ? mean[c] : running_mean0(c), v = training ? var[c] : running_var0(c);
    return (x.at(i) - m) / std::sqrt(v + kEps) * (w ? w->v[c] : 1) + (b ? b->v[c] : 0);
  });
  if (!training) return {y};
  Nd rm = build({C}, [&](const Idx& i) { return (1 - kMomentum) * running_mean0(i[0]) + kMomentum * mean[i[0]]; });
  Nd rv = build({C}, [&](const Idx& i) {
    const double unbiased = var[i[0]] * count / (count - 1);
    return (1 - kMomentum) * running_var0(i[0]) + kMomentum * unbiased;
  });
  return {y, rm, rv};
}

// x viewed as [outer, inner]: each row normalised with its mean and biased variance.
Nd normalize_rows(const Nd& x, int64_t inner) {
  Nd y = x;
  for (int64_t row = 0; row < x.numel() / inner; ++row) {
    double mean = 0, var = 0;
    for (int64_t k = 0; k < inner; ++k) mean += x.v[row * inner + k] / inner;
    for (int64_t k = 0; k < inner; ++k) var += std::pow(x.v[row * inner + k] - mean, 2) / inner;
    for (int64_t k = 0; k < inner; ++k) y.v[row * inner + k] = (x.v[row * inner + k] - mean) / std::sqrt(var + kEps);
  }
  return y;
}

std::vector<OpRow> nn_rows() {
  auto conv_geometry = [](Idx stride, Idx lo, Idx hi, Idx dilation, int64_t groups) {
    return ConvGeometry{std::move(stride), std::move(lo), std::move(hi), std::move(dilation), groups};
  };
  const Shape kMaxPoolInput{1, 2, 7, 8};
  std::vector<OpRow> rows = {
      conv_row("conv2d", {{{2, 3, 5, 4}, {4, 3, 3, 2}, {4}}, {{3, 5, 4}, {4, 3, 3, 2}, {4}}},
               [](const In& x) { return conv2d(x[0], x[1], x[2], 1, 1); }, conv_geometry({1, 1}, {1, 1}, {1, 1}, {1, 1}, 1),
               false),
      conv_row("conv2d_strided_grouped_dilated", {{{1, 4, 7, 6}, {6, 2, 3, 2}, {6}}},
               [](const In& x) { return conv2d(x[0], x[1], x[2], {2, 1}, {1, 2}, {1, 2}, 2); },
               conv_geometry({2, 1}, {1, 2}, {1, 2}, {1, 2}, 2), false),
      // "same" with even kernels: 1 = 0 + 1 rows and 3 = 1 + 2 columns of padding.
      conv_row("conv2d_same", {{{2, 2, 5, 4}, {3, 2, 2, 4}}},
               [](const In& x) { return conv2d(x[0], x[1], {}, 1, "same"); },
               conv_geometry({1, 1}, {0, 1}, {1, 2}, {1, 1}, 1), false),
      conv_row("conv1d", {{{2, 4, 9}, {6, 2, 3}, {6}}, {{4, 9}, {6, 2, 3}, {6}}},
               [](const In& x) { return conv1d(x[0], x[1], x[2], 2, 1, 2, 2); },
               conv_geometry({1, 2}, {0, 1}, {0, 1}, {1, 2}, 2), true),
      conv_row("conv1d_same", {{{2, 4, 9}, {4, 2, 4}}},
               [](const In& x) { return conv1d(x[0], x[1], {}, 1, "same", 2, 2); },
               conv_geometry({1, 1}, {0, 3}, {0, 3}, {1, 2}, 2), true),

      conv_transpose_row("conv_transpose2d", {{{2, 4, 3, 4}, {4, 3, 3, 2}, {3}}, {{4, 3, 4}, {4, 3, 3, 2}, {3}}},
                         [](const In& x) { return conv_transpose2d(x[0], x[1], x[2]); },
                         conv_geometry({1, 1}, {0, 0}, {0, 0}, {1, 1}, 1), false),
      // output_padding below the stride; groups.
      conv_transpose_row("conv_transpose2d_strided_grouped", {{{2, 4, 3, 3}, {4, 2, 3, 3}, {4}}},
                         [](const In& x) { return conv_transpose2d(x[0], x[1], x[2], {2, 3}, {1, 0}, {1, 2}, 2); },
                         conv_geometry({2, 3}, {1, 0}, {1, 2}, {1, 1}, 2), false),
      // output_padding that only the dilation allows (stride 1): the rows past the convolution's reach.
      conv_transpose_row("conv_transpose2d_dilated", {{{2, 2, 4, 3}, {2, 3, 2, 3}}},
                         [](const In& x) { return conv_transpose2d(x[0], x[1], {}, 1, {0, 1}, 1, 1, {2, 3}); },
                         conv_geometry({1, 1}, {0, 1}, {1, 1}, {2, 3}, 1), false),
      conv_transpose_row("conv_transpose2d_strided_dilated", {{{1, 3, 4, 4}, {3, 2, 3, 2}, {2}}},
                         [](const In& x) { return conv_transpose2d(x[0], x[1], x[2], 2, 2, 1, 1, 2); },
                         conv_geometry({2, 2}, {2, 2}, {1, 1}, {2, 2}, 1), false),
      conv_transpose_row("conv_transpose1d", {{{2, 4, 5}, {4, 3, 3}, {6}}, {{4, 5}, {4, 3, 3}, {6}}},
                         [](const In& x) { return conv_transpose1d(x[0], x[1], x[2], 2, 1, 1, 2, 2); },
                         conv_geometry({1, 2}, {0, 1}, {0, 1}, {1, 2}, 2), true),

      pool_row("max_pool2d", {{{2, 3, 6, 6}}, {{3, 5, 5}}}, [](const In& x) { return Out{max_pool2d(x[0], 2)}; },
               [](const Refs& x) { return Refs{max_pool_ref(x[0], {.kernel = {2, 2}, .stride = {2, 2}})[0]}; }),
      pool_row("max_pool2d_with_indices", {{kMaxPoolInput}},
               [](const In& x) {
                 auto [v, i] = max_pool2d_with_indices(x[0], {3, 2}, {2, 1}, {1, 0}, {1, 2}, /*ceil_mode=*/true);
                 return Out{v, i};
               },
               [](const Refs& x) {
                 return max_pool_ref(x[0], {.kernel = {3, 2}, .stride = {2, 1}, .padding = {1, 0}, .dilation = {1, 2},
                                            .ceil_mode = true});
               }),
      pool_row("avg_pool2d", {{{2, 3, 6, 6}}, {{3, 7, 5}}}, [](const In& x) { return Out{avg_pool2d(x[0], 3, 2, 1)}; },
               [](const Refs& x) {
                 return Refs{avg_pool_ref(x[0], {.kernel = {3, 3}, .stride = {2, 2}, .padding = {1, 1}})};
               }),
      pool_row("avg_pool2d_ceil_exclude_pad", {{{1, 2, 7, 6}}},
               [](const In& x) { return Out{avg_pool2d(x[0], {3, 2}, 2, 1, /*ceil_mode=*/true, false)}; },
               [](const Refs& x) {
                 return Refs{avg_pool_ref(x[0], {.kernel = {3, 2}, .stride = {2, 2}, .padding = {1, 1},
                                                 .ceil_mode = true, .count_include_pad = false})};
               }),
      pool_row("adaptive_avg_pool2d", {{{2, 2, 7, 6}}, {{2, 5, 4}}},
               [](const In& x) { return Out{adaptive_avg_pool2d(x[0], {3, 2})}; },
               [](const Refs& x) { return adaptive_pool_ref(x[0], {3, 2}, false); }),
      pool_row("adaptive_avg_pool2d_grow", {{{1, 2, 7, 6}}},
               [](const In& x) { return Out{adaptive_avg_pool2d(x[0], {9, 8})}; },
               [](const Refs& x) { return adaptive_pool_ref(x[0], {9, 8}, false); }),
      pool_row("adaptive_max_pool2d", {{{2, 2, 7, 6}}},
               [](const In& x) {
                 auto [v, i] = adaptive_max_pool2d(x[0], {4, 5});
                 return Out{v, i};
               },
               [](const Refs& x) { return adaptive_pool_ref(x[0], {4, 5}, true); }),

      {.name = "batch_norm_training",
       .samples = {{{4, 3}, {3}, {3}}, {{2, 3, 4}, {3}, {3}}, {{2, 3, 3, 2}, {3}, {3}}},
       .op = [](const In& x) {
         Tensor rm = running_stats(3, running_mean0, x[0]), rv = running_stats(3, running_var0, x[0]);
         return Out{batch_norm(x[0], x[1], x[2], rm, rv, /*training=*/true, kMomentum, kEps)};
       },
       .ref = [](const Refs& x) { return Refs{batch_norm_ref(x[0], &x[1], &x[2], true)[0]}; }},
      // The running statistics a training step leaves (updated in place; not differentiable).
      {.name = "batch_norm_running_stats",
       .samples = {{{4, 3}}, {{2, 3, 3, 2}}},
       .op = [](const In& x) {
         Tensor rm = running_stats(3, running_mean0, x[0]), rv = running_stats(3, running_var0, x[0]);
         batch_norm(x[0], {}, {}, rm, rv, /*training=*/true, kMomentum, kEps);
         return Out{rm, rv};
       },
       .ref = [](const Refs& x) {
         Refs r = batch_norm_ref(x[0], nullptr, nullptr, true);
         return Refs{r[1], r[2]};
       },
       .differentiable = false},
      {.name = "batch_norm_eval",
       .samples = {{{4, 3}, {3}, {3}}, {{2, 3, 3, 2}, {3}, {3}}},
       .op = [](const In& x) {
         Tensor rm = running_stats(3, running_mean0, x[0]), rv = running_stats(3, running_var0, x[0]);
         return Out{batch_norm(x[0], x[1], x[2], rm, rv, /*training=*/false, kMomentum, kEps)};
       },
       .ref = [](const Refs& x) { return batch_norm_ref(x[0], &x[1], &x[2], false); }},
      {.name = "batch_norm_no_affine_no_stats",
       .samples = {{{3, 2, 4}}},
       .op = [](const In& x) { return Out{batch_norm(x[0], {}, {}, {}, {}, true, kMomentum, kEps)}; },
       .ref = [](const Refs& x) { return Refs{batch_norm_ref(x[0], nullptr, nullptr, true)[0]}; }},
      {.name = "layer_norm",
       .samples = {{{2, 3, 4}, {3, 4}, {3, 4}}},
       .op = [](const In& x) { return Out{F::layer_norm(x[0], F::LayerNormFuncOptions({3, 4}).weight(x[1]).bias(x[2]))}; },
       .ref = [](const Refs& x) {
         Nd y = normalize_rows(x[0], 12);
         for (int64_t k = 0; k < y.numel(); ++k) y.v[k] = y.v[k] * x[1].v[k % 12] + x[2].v[k % 12];
         return Refs{y};
       }},
      {.name = "group_norm",
       .samples = {{{2, 4, 3, 2}, {4}, {4}}},
       .op = [](const In& x) { return Out{F::group_norm(x[0], F::GroupNormFuncOptions(2).weight(x[1]).bias(x[2]))}; },
       .ref = [](const Refs& x) {
         Nd y = normalize_rows(x[0], 2 * 3 * 2);  // 2 groups of 2 channels of 3 x 2
         for (int64_t k = 0; k < y.numel(); ++k) {
           const int64_t c = unravel(y.shape, k)[1];
           y.v[k] = y.v[k] * x[1].v[c] + x[2].v[c];
         }
         return Refs{y};
       }},

      {.name = "embedding",
       .samples = {{{10, 3}, {2, 4}}, {{6, 2}, {5}}},
       .op = [](const In& x) { return Out{embedding(x[0], x[1])}; },
       .ref = [](const Refs& x) {
         Shape shape = x[1].shape;
         shape.push_back(x[0].size(1));
         return Refs{build(shape, [&](const Idx& i) {
           const Idx at(i.begin(), i.end() - 1);
           return x[0].at({static_cast<int64_t>(x[1].at(at)), i.back()});
         })};
       },
       .domains = {Domain{}, index_below(6)}},
      // padding_idx 2 is not among the indices: there the gradient is the true derivative (the row at
      // padding_idx gets none by definition, which finite differences cannot agree with; the
      // embedding tests in tests/nn check that rule).
      {.name = "embedding_padding_idx",
       .samples = {{{5, 3}}},
       .op = [](const In& x) { return Out{embedding(x[0], tensor(std::vector<int64_t>{3, 1, 3, 0, 4, 1}).to(x[0].device()), 2)}; },
       .ref = [](const Refs& x) {
         const Idx rows{3, 1, 3, 0, 4, 1};
         return Refs{build({6, 3}, [&](const Idx& i) { return x[0].at({rows[i[0]], i[1]}); })};
       }},
      {.name = "leaky_relu",
       .samples = {{{2, 3}}, {{}}, {{3, 1, 4}}},
       .op = [](const In& x) { return Out{F::leaky_relu(x[0], 0.2)}; },
       .ref = [](const Refs& x) { return Refs{map(x[0], [](double v) { return v > 0 ? v : 0.2 * v; })}; }},
  };
  // NaN and +-inf: pools and leaky_relu (NaN stays NaN: 0.2 NaN); the 2x2 pool's vectorised plane
  // gets a long row.
  for (OpRow& r : rows)
    if (r.name.find("pool") != std::string::npos || r.name == "leaky_relu") r.specials = true;
  for (OpRow& r : rows)
    if (r.name == "max_pool2d") r.special_samples = {{{2, 2, 4, 70}}};
  return rows;
}
COHORT_OP_ROWS("nn", nn_rows);

}  // namespace
}  // namespace cohort::testing
