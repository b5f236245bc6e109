// Op-table rows for the ops that reorder, window or repeat elements (flip, roll, unfold,
// repeat_interleave) and for padding. Each reference names, for every output element, the input
// element it holds (or the padding value).
#include "cohort/ops/creation.h"
#include "cohort/ops/padding.h"
#include "cohort/ops/reorder.h"
#include "support/op_table.h"

namespace cohort::testing {
namespace {

using Idx = std::vector<int64_t>;

// out[idx] = x[source(idx)] for an output of shape out_shape(x.shape). Elements only move, so NaN
// and inf are checked too.
OpRow moved(std::string name, std::vector<std::vector<Shape>> samples, std::function<Tensor(const Tensor&)> op,
            std::function<Shape(const Shape&)> out_shape, std::function<Idx(const Idx&, const Shape&)> source) {
  return {.name = std::move(name),
          .samples = std::move(samples),
          .op = [op](const In& x) { return Out{op(x[0])}; },
          .ref = [=](const Refs& x) {
            return Refs{build(out_shape(x[0].shape), [&](const Idx& i) { return x[0].at(source(i, x[0].shape)); })};
          },
          .specials = true};
}

int64_t wrap(int64_t i, int64_t n) { return ((i % n) + n) % n; }

std::vector<OpRow> reorder_rows() {
  auto same = [](const Shape& s) { return s; };
  return {
      moved("flip", {{{2, 3, 4}}}, [](const Tensor& x) { return flip(x, {0, 2}); }, same,
            [](const Idx& i, const Shape& s) { return Idx{s[0] - 1 - i[0], i[1], s[2] - 1 - i[2]}; }),
      moved("flip_negative_dim", {{{3}}, {{2, 3}}}, [](const Tensor& x) { return flip(x, {-1}); }, same,
            [](Idx i, const Shape& s) { return i.back() = s.back() - 1 - i.back(), i; }),
      moved("roll", {{{2, 3, 4}}}, [](const Tensor& x) { return roll(x, {1, -2}, {0, 2}); }, same,
            [](const Idx& i, const Shape& s) { return Idx{wrap(i[0] - 1, s[0]), i[1], wrap(i[2] + 2, s[2])}; }),
      moved("roll_flattened", {{{2, 3}}}, [](const Tensor& x) { return roll(x, {4}); }, same,
            [](const Idx& i, const Shape& s) {
              const int64_t f = wrap(i[0] * s[1] + i[1] - 4, s[0] * s[1]);
              return Idx{f / s[1], f % s[1]};
            }),
      moved("unfold", {{{5, 3}}}, [](const Tensor& x) { return unfold(x, 0, 2, 2); },
            [](const Shape&) { return Shape{2, 3, 2}; }, [](const Idx& i, const Shape&) { return Idx{2 * i[0] + i[2], i[1]}; }),
      // Overlapping windows: an element's gradient adds up over the windows holding it.
      moved("unfold_overlapping", {{{2, 7}}}, [](const Tensor& x) { return unfold(x, -1, 3, 2); },
            [](const Shape&) { return Shape{2, 3, 3}; }, [](const Idx& i, const Shape&) { return Idx{i[0], 2 * i[1] + i[2]}; }),
      moved("repeat_interleave", {{{2, 3}}}, [](const Tensor& x) { return repeat_interleave(x, 2, 1); },
            [](const Shape&) { return Shape{2, 6}; }, [](const Idx& i, const Shape&) { return Idx{i[0], i[1] / 2}; }),
      moved("repeat_interleave_flattened", {{{2, 3}}}, [](const Tensor& x) { return repeat_interleave(x, 2); },
            [](const Shape&) { return Shape{12}; }, [](const Idx& i, const Shape&) { return Idx{i[0] / 6, (i[0] / 2) % 3}; }),
      moved("repeat_interleave_tensor", {{{3, 2}}},
            [](const Tensor& x) { return repeat_interleave(x, tensor(std::vector<int64_t>{1, 0, 2}), 0); },
            [](const Shape&) { return Shape{3, 2}; }, [](const Idx& i, const Shape&) { return Idx{i[0] == 0 ? 0 : 2, i[1]}; }),
  };
}

// Padding: the output position p along a padded dim reads input position from(p, len), or the
// constant when that is outside [0, len).
using From = std::function<int64_t(int64_t p, int64_t len)>;
Nd padded(const Nd& x, const std::vector<int64_t>& pad, const From& from, double value = 0) {
  Shape s = x.shape;
  for (size_t k = 0; k < pad.size() / 2; ++k) s[s.size() - 1 - k] += pad[2 * k] + pad[2 * k + 1];
  return build(s, [&](Idx i) {
    for (size_t k = 0; k < pad.size() / 2; ++k) {
      const size_t d = s.size() - 1 - k;
      i[d] = from(i[d] - pad[2 * k], x.shape[d]);
      if (i[d] < 0 || i[d] >= x.shape[d]) return value;
    }
    return x.at(i);
  });
}

OpRow pad_row(std::string name, std::vector<std::vector<Shape>> samples, std::function<Tensor(const Tensor&)> op,
              std::vector<int64_t> pad, From from, double value = 0) {
  return {.name = std::move(name),
          .samples = std::move(samples),
          .op = [op](const In& x) { return Out{op(x[0])}; },
          .ref = [=](const Refs& x) { return Refs{padded(x[0], pad, from, value)}; },
          .specials = true};
}

std::vector<OpRow> padding_rows() {
  const From as_is = [](int64_t p, int64_t) { return p; };
  const From mirror = [](int64_t p, int64_t n) { return p < 0 ? -p : (p >= n ? 2 * (n - 1) - p : p); };
  const From clamp = [](int64_t p, int64_t n) { return std::min(std::max<int64_t>(p, 0), n - 1); };
  return {
      pad_row("constant_pad_nd", {{{2, 3}}}, [](const Tensor& x) { return constant_pad_nd(x, {1, 2}, 0.5); }, {1, 2},
              as_is, 0.5),
      // A negative amount crops: the last dim loses one element before and gains two after.
      pad_row("constant_pad_nd_crop", {{{2, 3, 4}}}, [](const Tensor& x) { return constant_pad_nd(x, {-1, 2, 1, 0}); },
              {-1, 2, 1, 0}, as_is),
      pad_row("reflection_pad1d", {{{2, 5}}, {{1, 2, 4}}},
              [](const Tensor& x) { return reflection_pad1d(x, {2, 3}); }, {2, 3}, mirror),
      pad_row("reflection_pad2d", {{{1, 3, 4}}, {{2, 1, 3, 3}}},
              [](const Tensor& x) { return reflection_pad2d(x, {1, 2, 2, 1}); }, {1, 2, 2, 1}, mirror),
      pad_row("replication_pad1d", {{{2, 3}}}, [](const Tensor& x) { return replication_pad1d(x, {4, 1}); }, {4, 1},
              clamp),
      pad_row("replication_pad2d", {{{1, 2, 3}}, {{2, 1, 2, 2}}},
              [](const Tensor& x) { return replication_pad2d(x, {1, 0, 2, 3}); }, {1, 0, 2, 3}, clamp),
  };
}

COHORT_OP_ROWS("reorder", reorder_rows);
COHORT_OP_ROWS("padding", padding_rows);

}  // namespace
}  // namespace cohort::testing
