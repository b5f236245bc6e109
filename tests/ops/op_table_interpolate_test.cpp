// Op-table rows for the upsample ops (include/cohort/ops/interpolate.h): nearest, bilinear with and
// without align_corners, with the user's scale factors, and antialiased bilinear, upscaling and
// downscaling. The reference maps each output pixel to its input pixels and weights per dim, as
// plain loops (separable: the weight of an input pixel is the product of its row's and column's).
#include "cohort/ops/interpolate.h"
#include "support/op_table.h"

#include <algorithm>
#include <cmath>
#include <optional>

namespace cohort::testing {
namespace {

using Idx = std::vector<int64_t>;
// (input index, weight) pairs of one output index along one dim.
using Taps = std::vector<std::pair<int64_t, double>>;

double scale_of(int64_t in, int64_t out, std::optional<double> user) { return user ? 1 / *user : double(in) / out; }

Taps nearest_taps(int64_t i, int64_t in, int64_t out, std::optional<double> user) {
  return {{std::min(static_cast<int64_t>(std::floor(i * scale_of(in, out, user))), in - 1), 1.0}};
}

Taps bilinear_taps(int64_t i, int64_t in, int64_t out, bool align_corners, std::optional<double> user) {
  double src;
  if (align_corners) {
    src = out > 1 ? double(in - 1) / (out - 1) * i : 0;
  } else {
    src = std::max(scale_of(in, out, user) * (i + 0.5) - 0.5, 0.0);
  }
  const int64_t i0 = std::min(static_cast<int64_t>(std::floor(src)), in - 1), i1 = std::min(i0 + 1, in - 1);
  const double l = src - i0;
  return {{i0, 1 - l}, {i1, l}};
}

// The triangle filter stretched by the scale when downscaling; weights normalised to sum to one.
Taps antialias_taps(int64_t i, int64_t in, int64_t out) {
  const double s = double(in) / out, support = s >= 1 ? s : 1, invscale = s >= 1 ? 1 / s : 1;
  const double center = s * (i + 0.5);
  const int64_t lo = std::max<int64_t>(static_cast<int64_t>(center - support + 0.5), 0);
  const int64_t hi = std::min<int64_t>(static_cast<int64_t>(center + support + 0.5), in);
  Taps taps;
  double total = 0;
  for (int64_t j = lo; j < hi; ++j) {
    const double x = std::abs((j - center + 0.5) * invscale), w = x < 1 ? 1 - x : 0;
    taps.push_back({j, w});
    total += w;
  }
  for (auto& t : taps) t.second /= total;
  return taps;
}

using TapFn = std::function<Taps(int64_t i, int64_t in, int64_t out)>;

Nd resample(const Nd& x, int64_t OH, int64_t OW, const TapFn& rows, const TapFn& cols) {
  const int64_t H = x.size(2), W = x.size(3);
  return build({x.size(0), x.size(1), OH, OW}, [&](const Idx& i) {
    double acc = 0;
    for (auto [r, wr] : rows(i[2], H, OH))
      for (auto [c, wc] : cols(i[3], W, OW)) acc += wr * wc * x.at({i[0], i[1], r, c});
    return acc;
  });
}

OpRow row(std::string name, Shape in, int64_t OH, int64_t OW, std::function<Tensor(const Tensor&)> op, TapFn rows,
          TapFn cols) {
  return {.name = std::move(name),
          .samples = {{in}},
          .op = [op](const In& x) { return Out{op(x[0])}; },
          .ref = [OH, OW, rows, cols](const Refs& x) { return Refs{resample(x[0], OH, OW, rows, cols)}; }};
}

std::vector<OpRow> interpolate_rows() {
  const Shape in{2, 2, 4, 5};
  auto nearest = [](std::optional<double> s) {
    return [s](int64_t i, int64_t n, int64_t o) { return nearest_taps(i, n, o, s); };
  };
  auto bilinear = [](bool align, std::optional<double> s) {
    return [align, s](int64_t i, int64_t n, int64_t o) { return bilinear_taps(i, n, o, align, s); };
  };
  const TapFn antialias = [](int64_t i, int64_t n, int64_t o) { return antialias_taps(i, n, o); };
  return {
      row("upsample_nearest2d", in, 7, 3, [](const Tensor& x) { return upsample_nearest2d(x, {7, 3}); },
          nearest(std::nullopt), nearest(std::nullopt)),
      // i * 0.4 floors to the same input pixel in float32 as in float64 (a third would not).
      row("upsample_nearest2d_scales", in, 10, 12,
          [](const Tensor& x) { return upsample_nearest2d(x, {10, 12}, 2.5, 2.5); }, nearest(2.5), nearest(2.5)),
      row("upsample_bilinear2d", in, 7, 3,
          [](const Tensor& x) { return upsample_bilinear2d(x, {7, 3}, false); }, bilinear(false, std::nullopt),
          bilinear(false, std::nullopt)),
      row("upsample_bilinear2d_align_corners", in, 7, 9,
          [](const Tensor& x) { return upsample_bilinear2d(x, {7, 9}, true); }, bilinear(true, std::nullopt),
          bilinear(true, std::nullopt)),
      row("upsample_bilinear2d_scales", in, 6, 7,
          [](const Tensor& x) { return upsample_bilinear2d(x, {6, 7}, false, 1.5, 1.5); }, bilinear(false, 1.5),
          bilinear(false, 1.5)),
      row("upsample_bilinear2d_antialias", {2, 2, 7, 5}, 3, 8,
          [](const Tensor& x) { return upsample_bilinear2d(x, {3, 8}, false, std::nullopt, std::nullopt, true); },
          antialias, antialias),
  };
}
COHORT_OP_ROWS("interpolate", interpolate_rows);

}  // namespace
}  // namespace cohort::testing
