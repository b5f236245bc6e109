// Op-table rows for the ops that reorder, window or repeat elements (flip, roll, unfold,
// repeat_interleave), for padding, and for the in-place forms of shape and scatter ops. Each reference names, for every output element, the input
// element it holds (or the padding value).
#include "cohort/ops/creation.h"
#include "cohort/ops/padding.h"
#include "cohort/ops/reorder.h"
#include "cohort/ops/scatter.h"
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
  const From wrap = [](int64_t p, int64_t n) { return (p + n) % n; };
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
      pad_row("reflection_pad3d", {{{1, 2, 3, 3}}, {{1, 1, 3, 2, 4}}},
              [](const Tensor& x) { return reflection_pad3d(x, {1, 2, 0, 1, 1, 1}); }, {1, 2, 0, 1, 1, 1}, mirror),
      pad_row("replication_pad3d", {{{1, 2, 1, 2}}, {{2, 1, 1, 2, 3}}},
              [](const Tensor& x) { return replication_pad3d(x, {2, 0, 1, 1, 0, 3}); }, {2, 0, 1, 1, 0, 3}, clamp),
      pad_row("pad_circular1d", {{{2, 4}}, {{2, 3, 4}}}, [](const Tensor& x) { return pad(x, {2, 4}, "circular"); },
              {2, 4}, wrap),
      pad_row("pad_circular2d", {{{2, 3, 4}}, {{1, 2, 3, 3}}},
              [](const Tensor& x) { return pad(x, {1, 2, 3, 0}, "circular"); }, {1, 2, 3, 0}, wrap),
      pad_row("pad_circular3d", {{{1, 2, 3, 2}}, {{1, 1, 2, 3, 2}}},
              [](const Tensor& x) { return pad(x, {1, 1, 2, 0, 0, 2}, "circular"); }, {1, 1, 2, 0, 0, 2}, wrap),
  };
}

// In-place forms on a fresh non-leaf copy (x * 1), so that autograd follows the tensor's new
// history: the same values and gradients as the out-of-place ops.
std::vector<OpRow> inplace_rows() {
  auto on_copy = [](std::function<void(const Tensor&, const In&)> f) {
    return [f](const In& x) {
      Tensor y = x[0] * 1.0;
      f(y, x);
      return Out{y};
    };
  };
  return {
      moved("unsqueeze_", {{{2, 3}}}, [](const Tensor& x) { Tensor y = x * 1.0; y.unsqueeze_(1); return y; },
            [](const Shape& s) { return Shape{s[0], 1, s[1]}; }, [](const Idx& i, const Shape&) { return Idx{i[0], i[2]}; }),
      moved("squeeze_", {{{2, 1, 3}}}, [](const Tensor& x) { Tensor y = x * 1.0; y.squeeze_(1); return y; },
            [](const Shape& s) { return Shape{s[0], s[2]}; }, [](const Idx& i, const Shape&) { return Idx{i[0], 0, i[1]}; }),
      moved("squeeze_all_", {{{2, 1, 3, 1}}}, [](const Tensor& x) { Tensor y = x * 1.0; y.squeeze_(); return y; },
            [](const Shape& s) { return Shape{s[0], s[2]}; }, [](const Idx& i, const Shape&) { return Idx{i[0], 0, i[1], 0}; }),
      moved("transpose_", {{{2, 3, 4}}}, [](const Tensor& x) { Tensor y = x * 1.0; y.transpose_(0, 2); return y; },
            [](const Shape& s) { return Shape{s[2], s[1], s[0]}; }, [](const Idx& i, const Shape&) { return Idx{i[2], i[1], i[0]}; }),
      moved("t_", {{{2, 3}}}, [](const Tensor& x) { Tensor y = x * 1.0; y.t_(); return y; },
            [](const Shape& s) { return Shape{s[1], s[0]}; }, [](const Idx& i, const Shape&) { return Idx{i[1], i[0]}; }),
      {.name = "scatter_",
       .samples = {{{3, 4}, {3, 1}, {3, 1}}},
       .op = on_copy([](const Tensor& y, const In& x) { y.scatter_(1, x[1], x[2]); }),
       .ref = [](const Refs& x) {
         Nd r = x[0];
         for (int64_t i = 0; i < 3; ++i) r.at({i, static_cast<int64_t>(x[1].v[i])}) = x[2].v[i];
         return Refs{r};
       },
       .domains = {Domain{}, index_below(4), Domain{}}, .specials = true},
      {.name = "index_add_",
       .samples = {{{4, 3}, {5}, {5, 3}}},
       .op = on_copy([](const Tensor& y, const In& x) { y.index_add_(0, x[1], x[2], 2.0); }),
       .ref = [](const Refs& x) {
         Nd r = x[0];
         for (int64_t k = 0; k < 5; ++k)
           for (int64_t c = 0; c < 3; ++c) r.at({static_cast<int64_t>(x[1].v[k]), c}) += 2.0 * x[2].at({k, c});
         return Refs{r};
       },
       .domains = {Domain{}, index_below(4), Domain{}}, .specials = true},
      {.name = "masked_scatter_",
       .samples = {{{2, 3}, {2, 3}, {6}}},
       .op = on_copy([](const Tensor& y, const In& x) { y.masked_scatter_(x[1], x[2]); }),
       .ref = [](const Refs& x) {
         Nd r = x[0];
         int64_t next = 0;
         for (int64_t f = 0; f < r.numel(); ++f)
           if (x[1].v[f] != 0) r.v[f] = x[2].v[next++];
         return Refs{r};
       },
       .domains = {Domain{}, boolean(), Domain{}}, .specials = true},
  };
}

COHORT_OP_ROWS("reorder", reorder_rows);
COHORT_OP_ROWS("inplace", inplace_rows);
COHORT_OP_ROWS("padding", padding_rows);

}  // namespace
}  // namespace cohort::testing
