// Op-table rows for the pools of 1 and 3 spatial dims (max with indices, average with ceil_mode and
// count_include_pad, adaptive), the 3-d convolutions (groups, stride, padding, dilation,
// output_padding), pixel_shuffle / pixel_unshuffle, im2col / col2im, affine_grid_generator and
// grid_sampler. Each reference is a plain loop over the
// output elements.
#include "cohort/ops/convolution.h"
#include "cohort/ops/fold.h"
#include "cohort/ops/grid_sample.h"
#include "cohort/ops/pixel_shuffle.h"
#include "cohort/ops/pooling.h"
#include "support/op_table.h"

#include <cmath>

namespace cohort::testing {
namespace {

using Idx = std::vector<int64_t>;
using S = std::vector<std::vector<Shape>>;

// [C, *spatial] gets a batch dim of 1 and loses it again.
Nd batched(Nd x, int64_t spatial) {
  if (x.dim() == spatial + 1) x.shape.insert(x.shape.begin(), 1);
  return x;
}
Nd like_input(Nd out, const Nd& input, int64_t spatial) {
  if (input.dim() == spatial + 1) out.shape.erase(out.shape.begin());
  return out;
}

// ---- pooling ----------------------------------------------------------------------------------

struct Pool {
  Idx kernel, stride, padding, dilation;
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

// Values and flat argmax (row-major within each (n, c) volume) of a max pool; NaN wins and the last
// NaN gives the index (PyTorch 1.13's CPU loop).
Refs max_pool_ref(const Nd& input, const Pool& g) {
  const int64_t sd = static_cast<int64_t>(g.kernel.size());
  const Nd x = batched(input, sd);
  Shape shape{x.size(0), x.size(1)};
  for (int64_t d = 0; d < sd; ++d)
    shape.push_back(pooled_size(x.size(2 + d), g.kernel[d], g.stride[d], g.padding[d], g.dilation[d], g.ceil_mode));
  Nd values = zeros_nd(shape), indices = zeros_nd(shape, kInt64);
  int64_t taps = 1;
  for (int64_t k : g.kernel) taps *= k;
  for (int64_t flat = 0; flat < values.numel(); ++flat) {
    const Idx o = unravel(shape, flat);
    double best = -INFINITY;
    int64_t at = -1;
    for (int64_t t = 0; t < taps; ++t) {
      const Idx k = unravel(g.kernel, t);
      Idx i{o[0], o[1]};
      int64_t pos = 0;
      bool inside = true;
      for (int64_t d = 0; d < sd; ++d) {
        const int64_t v = o[2 + d] * g.stride[d] - g.padding[d] + k[d] * g.dilation[d];
        inside = inside && v >= 0 && v < x.size(2 + d);
        i.push_back(v);
        pos = pos * x.size(2 + d) + v;
      }
      if (!inside) continue;
      const double value = x.at(i);
      if (at < 0 || value > best || std::isnan(value)) best = value, at = pos;
    }
    values.v[flat] = best, indices.v[flat] = static_cast<double>(at);
  }
  return {like_input(values, input, sd), like_input(indices, input, sd)};
}

// The window clipped to the padded input (its size is the divisor with count_include_pad), then to
// the input itself.
Nd avg_pool_ref(const Nd& input, const Pool& g) {
  const int64_t sd = static_cast<int64_t>(g.kernel.size());
  const Nd x = batched(input, sd);
  Shape shape{x.size(0), x.size(1)};
  for (int64_t d = 0; d < sd; ++d)
    shape.push_back(pooled_size(x.size(2 + d), g.kernel[d], g.stride[d], g.padding[d], 1, g.ceil_mode));
  Nd out = build(shape, [&](const Idx& o) {
    Idx lo, hi;
    int64_t padded = 1, inside = 1;
    for (int64_t d = 0; d < sd; ++d) {
      const int64_t size = x.size(2 + d), a = o[2 + d] * g.stride[d] - g.padding[d];
      const int64_t b = std::min(a + g.kernel[d], size + g.padding[d]);
      padded *= b - a;
      lo.push_back(std::max<int64_t>(a, 0)), hi.push_back(std::min(b, size));
      inside *= hi.back() - lo.back();
    }
    Idx extent;
    for (int64_t d = 0; d < sd; ++d) extent.push_back(hi[d] - lo[d]);
    double sum = 0;
    for (int64_t t = 0; t < inside; ++t) {
      const Idx k = unravel(extent, t);
      Idx i{o[0], o[1]};
      for (int64_t d = 0; d < sd; ++d) i.push_back(lo[d] + k[d]);
      sum += x.at(i);
    }
    return sum / static_cast<double>(g.count_include_pad ? padded : inside);
  });
  return like_input(out, input, sd);
}

// Adaptive windows: output i of P covers [floor(i H / P), ceil((i + 1) H / P)) in each dim.
Refs adaptive_pool_ref(const Nd& input, Idx size, bool max) {
  const int64_t sd = static_cast<int64_t>(size.size());
  const Nd x = batched(input, sd);
  Shape shape{x.size(0), x.size(1)};
  shape.insert(shape.end(), size.begin(), size.end());
  Nd values = zeros_nd(shape), indices = zeros_nd(shape, kInt64);
  for (int64_t flat = 0; flat < values.numel(); ++flat) {
    const Idx o = unravel(shape, flat);
    Idx lo, extent;
    int64_t count = 1;
    for (int64_t d = 0; d < sd; ++d) {
      const int64_t in = x.size(2 + d), a = o[2 + d] * in / size[d], b = ((o[2 + d] + 1) * in + size[d] - 1) / size[d];
      lo.push_back(a), extent.push_back(b - a), count *= b - a;
    }
    double acc = max ? -INFINITY : 0;
    int64_t at = -1;
    for (int64_t t = 0; t < count; ++t) {
      const Idx k = unravel(extent, t);
      Idx i{o[0], o[1]};
      int64_t pos = 0;
      for (int64_t d = 0; d < sd; ++d) i.push_back(lo[d] + k[d]), pos = pos * x.size(2 + d) + lo[d] + k[d];
      const double value = x.at(i);
      if (!max) acc += value;
      else if (at < 0 || value > acc || std::isnan(value)) acc = value, at = pos;
    }
    values.v[flat] = max ? acc : acc / static_cast<double>(count);
    indices.v[flat] = static_cast<double>(at);
  }
  if (!max) return {like_input(values, input, sd)};
  return {like_input(values, input, sd), like_input(indices, input, sd)};
}

OpRow row(std::string name, S samples, std::function<Out(const In&)> op, RefFn ref) {
  return {.name = std::move(name), .samples = std::move(samples), .op = std::move(op), .ref = std::move(ref),
          .specials = true};
}

std::vector<OpRow> pool_rows() {
  return {
      row("max_pool1d", {{{2, 3, 9}}, {{3, 8}}}, [](const In& x) { return Out{max_pool1d(x[0], 2)}; },
          [](const Refs& x) { return Refs{max_pool_ref(x[0], {{2}, {2}, {0}, {1}})[0]}; }),
      row("max_pool1d_with_indices", {{{2, 2, 11}}},
          [](const In& x) {
            auto [v, i] = max_pool1d_with_indices(x[0], 3, 2, 1, 2, /*ceil_mode=*/true);
            return Out{v, i};
          },
          [](const Refs& x) { return max_pool_ref(x[0], {{3}, {2}, {1}, {2}, true}); }),
      row("avg_pool1d_ceil_exclude_pad", {{{2, 3, 8}}, {{2, 7}}},
          [](const In& x) { return Out{avg_pool1d(x[0], 3, 2, 1, /*ceil_mode=*/true, /*count_include_pad=*/false)}; },
          [](const Refs& x) { return Refs{avg_pool_ref(x[0], {{3}, {2}, {1}, {1}, true, false})}; }),
      row("avg_pool1d", {{{2, 3, 8}}}, [](const In& x) { return Out{avg_pool1d(x[0], 3, 2, 1)}; },
          [](const Refs& x) { return Refs{avg_pool_ref(x[0], {{3}, {2}, {1}, {1}})}; }),
      row("adaptive_avg_pool1d", {{{2, 3, 7}}, {{2, 5}}}, [](const In& x) { return Out{adaptive_avg_pool1d(x[0], 3)}; },
          [](const Refs& x) { return adaptive_pool_ref(x[0], {3}, false); }),
      row("adaptive_max_pool1d", {{{2, 3, 7}}},
          [](const In& x) {
            auto [v, i] = adaptive_max_pool1d(x[0], 4);
            return Out{v, i};
          },
          [](const Refs& x) { return adaptive_pool_ref(x[0], {4}, true); }),

      row("max_pool3d", {{{1, 2, 4, 4, 5}}, {{2, 4, 4, 4}}}, [](const In& x) { return Out{max_pool3d(x[0], 2)}; },
          [](const Refs& x) { return Refs{max_pool_ref(x[0], {{2, 2, 2}, {2, 2, 2}, {0, 0, 0}, {1, 1, 1}})[0]}; }),
      row("max_pool3d_with_indices", {{{1, 2, 5, 6, 5}}},
          [](const In& x) {
            auto [v, i] = max_pool3d_with_indices(x[0], {3, 2, 3}, {2, 1, 2}, {1, 0, 1}, {1, 2, 1}, /*ceil_mode=*/true);
            return Out{v, i};
          },
          [](const Refs& x) { return max_pool_ref(x[0], {{3, 2, 3}, {2, 1, 2}, {1, 0, 1}, {1, 2, 1}, true}); }),
      row("avg_pool3d", {{{1, 2, 5, 4, 5}}, {{2, 4, 5, 3}}}, [](const In& x) { return Out{avg_pool3d(x[0], 3, 2, 1)}; },
          [](const Refs& x) { return Refs{avg_pool_ref(x[0], {{3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}})}; }),
      row("avg_pool3d_ceil_exclude_pad", {{{1, 2, 6, 5, 4}}},
          [](const In& x) {
            return Out{avg_pool3d(x[0], {3, 2, 2}, 2, {1, 1, 0}, /*ceil_mode=*/true, /*count_include_pad=*/false)};
          },
          [](const Refs& x) {
            return Refs{avg_pool_ref(x[0], {{3, 2, 2}, {2, 2, 2}, {1, 1, 0}, {1, 1, 1}, true, false})};
          }),
      row("adaptive_avg_pool3d", {{{1, 2, 5, 4, 6}}, {{2, 3, 4, 5}}},
          [](const In& x) { return Out{adaptive_avg_pool3d(x[0], {2, 3, 4})}; },
          [](const Refs& x) { return adaptive_pool_ref(x[0], {2, 3, 4}, false); }),
      row("adaptive_max_pool3d", {{{1, 2, 5, 4, 6}}},
          [](const In& x) {
            auto [v, i] = adaptive_max_pool3d(x[0], {3, 2, 4});
            return Out{v, i};
          },
          [](const Refs& x) { return adaptive_pool_ref(x[0], {3, 2, 4}, true); }),
  };
}
COHORT_OP_ROWS("pool_nd", pool_rows);

// ---- 3-d convolution --------------------------------------------------------------------------

struct Conv3 {
  Idx stride{1, 1, 1}, pad_lo{0, 0, 0}, pad_hi{0, 0, 0}, dilation{1, 1, 1};
  int64_t groups = 1;
};

// x [N, C, D, H, W] or [C, D, H, W], w [O, C / groups, kD, kH, kW], b [O] or null.
Nd conv3d_ref(const Nd& input, const Nd& w, const Nd* b, const Conv3& g) {
  const Nd x = batched(input, 3);
  const int64_t O = w.size(0), Cg = w.size(1);
  Shape shape{x.size(0), O};
  for (int64_t d = 0; d < 3; ++d)
    shape.push_back((x.size(2 + d) + g.pad_lo[d] + g.pad_hi[d] - g.dilation[d] * (w.size(2 + d) - 1) - 1) / g.stride[d] + 1);
  Nd out = build(shape, [&](const Idx& o) {
    const int64_t group = o[1] / (O / g.groups);
    double acc = b ? b->v[o[1]] : 0;
    for (int64_t c = 0; c < Cg; ++c)
      for (int64_t kd = 0; kd < w.size(2); ++kd)
        for (int64_t kh = 0; kh < w.size(3); ++kh)
          for (int64_t kw = 0; kw < w.size(4); ++kw) {
            const Idx k{kd, kh, kw};
            Idx i{o[0], group * Cg + c};
            bool inside = true;
            for (int64_t d = 0; d < 3; ++d) {
              const int64_t v = o[2 + d] * g.stride[d] - g.pad_lo[d] + k[d] * g.dilation[d];
              inside = inside && v >= 0 && v < x.size(2 + d);
              i.push_back(v);
            }
            if (inside) acc += x.at(i) * w.at({o[1], c, kd, kh, kw});
          }
    return acc;
  });
  return like_input(out, input, 3);
}

// The definition: output z gathers every input d and tap k with d * stride - padding + k * dilation
// = z. x [N, C, D, H, W] or [C, D, H, W], w [C, O / groups, kD, kH, kW]; g.pad_hi holds the
// output_padding.
Nd conv_transpose3d_ref(const Nd& input, const Nd& w, const Nd* b, const Conv3& g) {
  const Nd x = batched(input, 3);
  const int64_t C = x.size(1), Og = w.size(1), Cg = C / g.groups;
  Shape shape{x.size(0), Og * g.groups};
  for (int64_t d = 0; d < 3; ++d)
    shape.push_back((x.size(2 + d) - 1) * g.stride[d] - 2 * g.pad_lo[d] + g.dilation[d] * (w.size(2 + d) - 1) +
                    g.pad_hi[d] + 1);
  Nd out = build(shape, [&](const Idx& o) {
    const int64_t group = o[1] / Og, oc = o[1] % Og;
    double acc = b ? b->v[o[1]] : 0;
    for (int64_t c = group * Cg; c < (group + 1) * Cg; ++c)
      for (int64_t kd = 0; kd < w.size(2); ++kd)
        for (int64_t kh = 0; kh < w.size(3); ++kh)
          for (int64_t kw = 0; kw < w.size(4); ++kw) {
            const Idx k{kd, kh, kw};
            Idx i{o[0], c};
            bool inside = true;
            for (int64_t d = 0; d < 3; ++d) {
              const int64_t shifted = o[2 + d] + g.pad_lo[d] - k[d] * g.dilation[d];
              inside = inside && shifted >= 0 && shifted % g.stride[d] == 0 && shifted / g.stride[d] < x.size(2 + d);
              i.push_back(inside ? shifted / g.stride[d] : 0);
            }
            if (inside) acc += x.at(i) * w.at({c, oc, kd, kh, kw});
          }
    return acc;
  });
  return like_input(out, input, 3);
}

OpRow conv_row(std::string name, S samples, std::function<Tensor(const In&)> op, Conv3 g, bool transposed) {
  return {.name = std::move(name),
          .samples = std::move(samples),
          .op = [op](const In& x) { return Out{op(x)}; },
          .ref = [g, transposed](const Refs& x) {
            const Nd* b = x.size() > 2 ? &x[2] : nullptr;
            return Refs{transposed ? conv_transpose3d_ref(x[0], x[1], b, g) : conv3d_ref(x[0], x[1], b, g)};
          }};
}

std::vector<OpRow> conv3d_rows() {
  return {
      conv_row("conv3d", {{{2, 3, 4, 5, 4}, {4, 3, 2, 3, 2}, {4}}, {{3, 3, 4, 4}, {2, 3, 2, 2, 3}, {2}}},
               [](const In& x) { return conv3d(x[0], x[1], x[2], 1, 1); },
               {{1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, 1}, false),
      conv_row("conv3d_strided_grouped_dilated", {{{1, 4, 7, 6, 5}, {6, 2, 3, 2, 2}, {6}}},
               [](const In& x) { return conv3d(x[0], x[1], x[2], {2, 1, 2}, {1, 0, 1}, {2, 1, 2}, 2); },
               {{2, 1, 2}, {1, 0, 1}, {1, 0, 1}, {2, 1, 2}, 2}, false),
      // "same" with even kernels: the odd padding at the end, in every dim.
      conv_row("conv3d_same", {{{1, 2, 4, 5, 3}, {3, 2, 2, 4, 3}}},
               [](const In& x) { return conv3d(x[0], x[1], {}, 1, "same", {2, 1, 1}); },
               {{1, 1, 1}, {1, 1, 1}, {1, 2, 1}, {2, 1, 1}, 1}, false),
      conv_row("conv_transpose3d", {{{2, 4, 3, 2, 3}, {4, 3, 2, 3, 2}, {3}}, {{4, 2, 3, 2}, {4, 2, 2, 2, 2}, {2}}},
               [](const In& x) { return conv_transpose3d(x[0], x[1], x[2]); },
               {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, 1}, true),
      // stride, padding, output_padding (below the stride, or allowed by the dilation), groups.
      conv_row("conv_transpose3d_strided_grouped", {{{1, 4, 3, 3, 2}, {4, 2, 3, 2, 3}, {4}}},
               [](const In& x) {
                 return conv_transpose3d(x[0], x[1], x[2], {2, 3, 1}, {1, 0, 1}, {1, 2, 1}, 2, {1, 1, 2});
               },
               {{2, 3, 1}, {1, 0, 1}, {1, 2, 1}, {1, 1, 2}, 2}, true),
  };
}
COHORT_OP_ROWS("conv3d", conv3d_rows);

}  // namespace
}  // namespace cohort::testing

namespace cohort::testing {
namespace {

// ---- pixel shuffle ----------------------------------------------------------------------------

// out[..., c, h r + i, w r + j] = in[..., c r^2 + i r + j, h, w], on the last three dims.
Nd pixel_shuffle_ref(const Nd& x, int64_t r) {
  Shape shape = x.shape;
  const int64_t k = x.dim();
  shape[k - 3] /= r * r, shape[k - 2] *= r, shape[k - 1] *= r;
  return build(shape, [&](const Idx& o) {
    Idx i = o;
    i[k - 3] = o[k - 3] * r * r + (o[k - 2] % r) * r + o[k - 1] % r;
    i[k - 2] = o[k - 2] / r, i[k - 1] = o[k - 1] / r;
    return x.at(i);
  });
}

// The inverse: out[..., c r^2 + i r + j, h, w] = in[..., c, h r + i, w r + j].
Nd pixel_unshuffle_ref(const Nd& x, int64_t r) {
  Shape shape = x.shape;
  const int64_t k = x.dim();
  shape[k - 3] *= r * r, shape[k - 2] /= r, shape[k - 1] /= r;
  return build(shape, [&](const Idx& o) {
    const int64_t c = o[k - 3] / (r * r), i = o[k - 3] / r % r, j = o[k - 3] % r;
    Idx in = o;
    in[k - 3] = c, in[k - 2] = o[k - 2] * r + i, in[k - 1] = o[k - 1] * r + j;
    return x.at(in);
  });
}

std::vector<OpRow> pixel_shuffle_rows() {
  return {
      {.name = "pixel_shuffle",
       .samples = {{{2, 8, 3, 2}}, {{9, 2, 3}}, {{2, 1, 4, 2, 2}}},
       .op = [](const In& x) { return Out{pixel_shuffle(x[0], x[0].size(-3) == 9 ? 3 : 2)}; },
       .ref = [](const Refs& x) { return Refs{pixel_shuffle_ref(x[0], x[0].size(-3) == 9 ? 3 : 2)}; }},
      {.name = "pixel_unshuffle",
       .samples = {{{2, 2, 6, 4}}, {{3, 6, 9}}, {{2, 1, 2, 4, 4}}},
       .op = [](const In& x) { return Out{pixel_unshuffle(x[0], x[0].size(-1) == 9 ? 3 : 2)}; },
       .ref = [](const Refs& x) { return Refs{pixel_unshuffle_ref(x[0], x[0].size(-1) == 9 ? 3 : 2)}; }},
  };
}
COHORT_OP_ROWS("pixel_shuffle", pixel_shuffle_rows);

}  // namespace
}  // namespace cohort::testing

namespace cohort::testing {
namespace {

// ---- im2col / col2im --------------------------------------------------------------------------

struct Sliding {
  Idx kernel, dilation, padding, stride;
};

int64_t block_count(int64_t size, int64_t k, int64_t d, int64_t pad, int64_t s) {
  return (size + 2 * pad - d * (k - 1) - 1) / s + 1;
}

// out[n, (c kH + i) kW + j, p Q + q] = x[n, c, p sH - padH + i dH, q sW - padW + j dW] (0 outside).
Nd im2col_ref(const Nd& input, const Sliding& g) {
  const Nd x = batched(input, 2);
  const int64_t C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t P = block_count(H, g.kernel[0], g.dilation[0], g.padding[0], g.stride[0]);
  const int64_t Q = block_count(W, g.kernel[1], g.dilation[1], g.padding[1], g.stride[1]);
  Nd out = build({x.size(0), C * g.kernel[0] * g.kernel[1], P * Q}, [&](const Idx& o) {
    const int64_t c = o[1] / (g.kernel[0] * g.kernel[1]), i = o[1] / g.kernel[1] % g.kernel[0], j = o[1] % g.kernel[1];
    const int64_t h = o[2] / Q * g.stride[0] - g.padding[0] + i * g.dilation[0];
    const int64_t w = o[2] % Q * g.stride[1] - g.padding[1] + j * g.dilation[1];
    return h >= 0 && h < H && w >= 0 && w < W ? x.at({o[0], c, h, w}) : 0.0;
  });
  if (input.dim() == 3) out.shape.erase(out.shape.begin());
  return out;
}

// The adjoint: every column entry added at its image position (the padding dropped).
Nd col2im_ref(const Nd& input, Idx size, const Sliding& g) {
  Nd cols = input;
  if (cols.dim() == 2) cols.shape.insert(cols.shape.begin(), 1);
  const int64_t taps = g.kernel[0] * g.kernel[1], C = cols.size(1) / taps;
  const int64_t Q = block_count(size[1], g.kernel[1], g.dilation[1], g.padding[1], g.stride[1]);
  Nd out = zeros_nd({cols.size(0), C, size[0], size[1]});
  for (int64_t flat = 0; flat < cols.numel(); ++flat) {
    const Idx k = unravel(cols.shape, flat);
    const int64_t c = k[1] / taps, i = k[1] / g.kernel[1] % g.kernel[0], j = k[1] % g.kernel[1];
    const int64_t h = k[2] / Q * g.stride[0] - g.padding[0] + i * g.dilation[0];
    const int64_t w = k[2] % Q * g.stride[1] - g.padding[1] + j * g.dilation[1];
    if (h >= 0 && h < size[0] && w >= 0 && w < size[1]) out.at({k[0], c, h, w}) += cols.v[flat];
  }
  if (input.dim() == 2) out.shape.erase(out.shape.begin());
  return out;
}

std::vector<OpRow> fold_rows() {
  const Sliding plain{{2, 3}, {1, 1}, {0, 0}, {1, 1}}, strided{{3, 2}, {2, 1}, {1, 2}, {2, 3}};
  return {
      {.name = "im2col",
       .samples = {{{2, 3, 4, 5}}, {{2, 4, 4}}},
       .op = [](const In& x) { return Out{im2col(x[0], {2, 3}, 1, 0, 1)}; },
       .ref = [plain](const Refs& x) { return Refs{im2col_ref(x[0], plain)}; }},
      {.name = "im2col_strided_dilated_padded",
       .samples = {{{1, 2, 7, 6}}},
       .op = [](const In& x) { return Out{im2col(x[0], {3, 2}, {2, 1}, {1, 2}, {2, 3})}; },
       .ref = [strided](const Refs& x) { return Refs{im2col_ref(x[0], strided)}; }},
      // An image of 4 x 5 with 2 x 3 windows: 3 x 3 = 9 blocks.
      {.name = "col2im",
       .samples = {{{2, 12, 9}}, {{6, 9}}},
       .op = [](const In& x) { return Out{col2im(x[0], {4, 5}, {2, 3}, 1, 0, 1)}; },
       .ref = [plain](const Refs& x) { return Refs{col2im_ref(x[0], {4, 5}, plain)}; }},
      // An image of 7 x 6: 3 x 3 blocks of 3 x 2 taps.
      {.name = "col2im_strided_dilated_padded",
       .samples = {{{1, 12, 9}}},
       .op = [](const In& x) { return Out{col2im(x[0], {7, 6}, {3, 2}, {2, 1}, {1, 2}, {2, 3})}; },
       .ref = [strided](const Refs& x) { return Refs{col2im_ref(x[0], {7, 6}, strided)}; }},
  };
}
COHORT_OP_ROWS("fold", fold_rows);

}  // namespace
}  // namespace cohort::testing

namespace cohort::testing {
namespace {

// ---- spatial transformers ---------------------------------------------------------------------

double normalised(int64_t i, int64_t steps, bool align_corners) {
  if (steps <= 1) return 0;
  const double c = -1 + 2.0 * static_cast<double>(i) / static_cast<double>(steps - 1);
  return align_corners ? c : c * static_cast<double>(steps - 1) / static_cast<double>(steps);
}

// grid[n, h, w, k] = sum_j theta[n, k, j] (x_w, y_h, 1)_j.
Nd affine_grid_ref(const Nd& theta, int64_t H, int64_t W, bool align_corners) {
  return build({theta.size(0), H, W, 2}, [&](const Idx& i) {
    const double x = normalised(i[2], W, align_corners), y = normalised(i[1], H, align_corners);
    return theta.at({i[0], i[3], 0}) * x + theta.at({i[0], i[3], 1}) * y + theta.at({i[0], i[3], 2});
  });
}

// PyTorch's source coordinate: unnormalise, then border clamps and reflection folds at the edges.
double source(double g, int64_t size, int padding, bool align_corners) {
  double c = align_corners ? (g + 1) / 2 * static_cast<double>(size - 1) : ((g + 1) * static_cast<double>(size) - 1) / 2;
  if (padding == 2) {
    const double lo = align_corners ? 0 : -0.5, hi = align_corners ? static_cast<double>(size - 1) : size - 0.5;
    if (hi > lo) {
      const double span = hi - lo;
      double in = std::abs(c - lo);
      const double flips = std::floor(in / span), extra = in - flips * span;
      c = static_cast<int64_t>(flips) % 2 == 0 ? lo + extra : hi - extra;
    } else {
      c = 0;
    }
  }
  if (padding != 0) c = std::min(std::max(c, 0.0), static_cast<double>(size - 1));
  return c;
}

// Bilinear (or nearest, ties to even) samples of x [N, C, H, W] at grid [N, Ho, Wo, 2]; zeros outside.
Nd grid_sample_ref(const Nd& x, const Nd& grid, bool nearest, int padding, bool align_corners) {
  const int64_t H = x.size(2), W = x.size(3);
  return build({x.size(0), x.size(1), grid.size(1), grid.size(2)}, [&](const Idx& o) {
    const double ix = source(grid.at({o[0], o[2], o[3], 0}), W, padding, align_corners);
    const double iy = source(grid.at({o[0], o[2], o[3], 1}), H, padding, align_corners);
    auto pixel = [&](double px, double py) {
      const bool inside = px >= 0 && px <= static_cast<double>(W - 1) && py >= 0 && py <= static_cast<double>(H - 1);
      return inside ? x.at({o[0], o[1], static_cast<int64_t>(py), static_cast<int64_t>(px)}) : 0.0;
    };
    if (nearest) return pixel(std::nearbyint(ix), std::nearbyint(iy));
    const double x0 = std::floor(ix), y0 = std::floor(iy), fx = ix - x0, fy = iy - y0;
    return pixel(x0, y0) * (1 - fx) * (1 - fy) + pixel(x0 + 1, y0) * fx * (1 - fy) + pixel(x0, y0 + 1) * (1 - fx) * fy +
           pixel(x0 + 1, y0 + 1) * fx * fy;
  });
}

OpRow sampler_row(std::string name, bool nearest, int padding, bool align_corners) {
  return {.name = std::move(name),
          // Grid values in [-1.3, 1.3]: some samples fall outside the image.
          .samples = {{{2, 3, 4, 5}, {2, 3, 2, 2}}, {{1, 2, 3, 3}, {1, 4, 3, 2}}},
          .op = [=](const In& x) { return Out{grid_sampler(x[0], x[1], nearest ? 1 : 0, padding, align_corners)}; },
          .ref = [=](const Refs& x) { return Refs{grid_sample_ref(x[0], x[1], nearest, padding, align_corners)}; },
          .domains = {Domain{}, real(-1.3, 1.3)}};
}

std::vector<OpRow> transformer_rows() {
  return {
      {.name = "affine_grid_generator",
       .samples = {{{2, 2, 3}}},
       .op = [](const In& x) { return Out{affine_grid_generator(x[0], {2, 3, 4, 5}, false)}; },
       .ref = [](const Refs& x) { return Refs{affine_grid_ref(x[0], 4, 5, false)}; }},
      {.name = "affine_grid_generator_align_corners",
       .samples = {{{1, 2, 3}}},
       .op = [](const In& x) { return Out{affine_grid_generator(x[0], {1, 1, 3, 1}, true)}; },
       .ref = [](const Refs& x) { return Refs{affine_grid_ref(x[0], 3, 1, true)}; }},
      sampler_row("grid_sampler_bilinear_zeros", false, 0, false),
      sampler_row("grid_sampler_bilinear_border_align_corners", false, 1, true),
      sampler_row("grid_sampler_bilinear_reflection", false, 2, false),
      sampler_row("grid_sampler_bilinear_reflection_align_corners", false, 2, true),
      sampler_row("grid_sampler_nearest_zeros", true, 0, true),
  };
}
COHORT_OP_ROWS("grid_sample", transformer_rows);

}  // namespace
}  // namespace cohort::testing
