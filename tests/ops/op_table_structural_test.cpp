// Op-table rows for shape ops, joins, copies and conversions, and indexing. References build each
// output element from the input element it should hold (support/op_table.h: build), so a wrong
// stride or offset in a view shows as a wrong element.
#include <cmath>

#include "cohort/ops/creation.h"
#include "cohort/ops/indexing.h"
#include "cohort/ops/shape.h"
#include "support/op_table.h"

namespace cohort::testing {
namespace {

using S = std::vector<std::vector<Shape>>;
using Idx = std::vector<int64_t>;
using indexing::Slice;

// The same elements in row-major order under a new shape (view, reshape, flatten, squeeze...).
OpRow same_order(std::string name, S samples, std::function<Tensor(const Tensor&)> op,
                 std::function<Shape(const Shape&)> shape_of) {
  return {.name = std::move(name),
          .samples = std::move(samples),
          .op = [op](const In& x) { return Out{op(x[0])}; },
          .ref = [shape_of](const Refs& x) { return Refs{Nd{shape_of(x[0].shape), x[0].v}}; }};
}

// out[idx] = x[source(idx)] for an output of shape out_shape(x.shape).
OpRow mapped(std::string name, S samples, std::function<Tensor(const Tensor&)> op,
             std::function<Shape(const Shape&)> out_shape, std::function<Idx(const Idx&)> source) {
  return {.name = std::move(name),
          .samples = std::move(samples),
          .op = [op](const In& x) { return Out{op(x[0])}; },
          .ref = [=](const Refs& x) {
            return Refs{build(out_shape(x[0].shape), [&](const Idx& i) { return x[0].at(source(i)); })};
          }};
}

// Pieces of x along dim with these lengths (chunk, split, unbind when squeeze is set).
Refs pieces(const Nd& x, int64_t dim, const std::vector<int64_t>& lengths, bool squeeze = false) {
  Refs r;
  int64_t start = 0;
  for (int64_t len : lengths) {
    Shape s = x.shape;
    s[dim] = len;
    Nd p = build(s, [&](Idx i) { return i[dim] += start, x.at(i); });
    if (squeeze) p.shape.erase(p.shape.begin() + dim);
    r.push_back(p);
    start += len;
  }
  return r;
}

// x with `index` (int64 values) selecting along dim: out[.., i, ..] = x[.., index[i], ..].
Nd take(const Nd& x, int64_t dim, const Nd& index) {
  Shape s = x.shape;
  s.erase(s.begin() + dim);
  s.insert(s.begin() + dim, index.shape.begin(), index.shape.end());
  return build(s, [&](const Idx& i) {
    Idx src(i.begin(), i.begin() + dim);
    src.push_back(static_cast<int64_t>(index.at(Idx(i.begin() + dim, i.begin() + dim + index.dim()))));
    src.insert(src.end(), i.begin() + dim + index.dim(), i.end());
    return x.at(src);
  });
}

// NaN and +-inf only move with the elements here, so every row checks them too, except the
// conversion to int64 (NaN and inf have no int64 value; PyTorch leaves it undefined).
std::vector<OpRow> with_specials(std::vector<OpRow> rows) {
  for (OpRow& r : rows) r.specials = r.name != "to_int64";
  return rows;
}

std::vector<OpRow> shape_rows() {
  const S k234 = {{{2, 3, 4}}};
  std::vector<OpRow> rows = {
      same_order("view", {{{2, 3, 4}}, {{6}}}, [](auto& x) { return x.view({x.numel() / 2, -1}); },
                 [](const Shape& s) { return Shape{(s[0] * (s.size() > 1 ? s[1] * s[2] : 1)) / 2, 2}; }),
      same_order("reshape", {{{2, 3, 4}}, {{}}}, [](auto& x) { return reshape(x, {x.numel() / 1, 1}); },
                 [](const Shape& s) { return Shape{s.empty() ? 1 : 24, 1}; }),
      same_order("flatten", k234, [](auto& x) { return x.flatten(); }, [](const Shape&) { return Shape{24}; }),
      same_order("flatten_range", k234, [](auto& x) { return flatten(x, 1, 2); },
                 [](const Shape&) { return Shape{2, 12}; }),
      same_order("unflatten", {{{2, 6, 1}}}, [](auto& x) { return unflatten(x, 1, {3, -1}); },
                 [](const Shape&) { return Shape{2, 3, 2, 1}; }),
      same_order("unsqueeze", {{{2, 3}}, {{}}}, [](auto& x) { return unsqueeze(x, 0); },
                 [](Shape s) { return s.insert(s.begin(), 1), s; }),
      same_order("unsqueeze_last", {{{2, 3}}}, [](auto& x) { return x.unsqueeze(-1); },
                 [](const Shape&) { return Shape{2, 3, 1}; }),
      same_order("squeeze", {{{2, 1, 3, 1}}, {{1}}}, [](auto& x) { return squeeze(x); },
                 [](const Shape& s) { return s.size() == 1 ? Shape{} : Shape{2, 3}; }),
      same_order("squeeze_dim", {{{2, 1, 3, 1}}}, [](auto& x) { return x.squeeze(1); },
                 [](const Shape&) { return Shape{2, 3, 1}; }),
      mapped("permute", k234, [](auto& x) { return permute(x, {2, 0, 1}); },
             [](const Shape& s) { return Shape{s[2], s[0], s[1]}; }, [](const Idx& i) { return Idx{i[1], i[2], i[0]}; }),
      mapped("transpose", k234, [](auto& x) { return transpose(x, 0, 2); },
             [](const Shape& s) { return Shape{s[2], s[1], s[0]}; }, [](const Idx& i) { return Idx{i[2], i[1], i[0]}; }),
      mapped("transpose_negative", k234, [](auto& x) { return x.transpose(-1, -2); },
             [](const Shape& s) { return Shape{s[0], s[2], s[1]}; }, [](const Idx& i) { return Idx{i[0], i[2], i[1]}; }),
      mapped("t", {{{2, 3}}}, [](auto& x) { return t(x); }, [](const Shape& s) { return Shape{s[1], s[0]}; },
             [](const Idx& i) { return Idx{i[1], i[0]}; }),
      mapped("t_1d", {{{3}}}, [](auto& x) { return x.t(); }, [](const Shape& s) { return s; },
             [](const Idx& i) { return i; }),
      mapped("expand", {{{3, 1}}}, [](auto& x) { return x.expand({2, 3, 4}); },
             [](const Shape&) { return Shape{2, 3, 4}; }, [](const Idx& i) { return Idx{i[1], 0}; }),
      mapped("expand_keep", {{{1, 3}}}, [](auto& x) { return expand(x, {4, -1}); },
             [](const Shape&) { return Shape{4, 3}; }, [](const Idx& i) { return Idx{0, i[1]}; }),
      mapped("expand_0d", {{{}}}, [](auto& x) { return x.expand({2, 2}); }, [](const Shape&) { return Shape{2, 2}; },
             [](const Idx&) { return Idx{}; }),
      mapped("narrow", k234, [](auto& x) { return narrow(x, 1, 1, 2); },
             [](const Shape&) { return Shape{2, 2, 4}; }, [](const Idx& i) { return Idx{i[0], i[1] + 1, i[2]}; }),
      mapped("slice_step", k234, [](auto& x) { return slice(x, 2, 0, 4, 2); },
             [](const Shape&) { return Shape{2, 3, 2}; }, [](const Idx& i) { return Idx{i[0], i[1], 2 * i[2]}; }),
      mapped("slice_clamped_end", k234, [](auto& x) { return x.slice(-2, 1, 100); },
             [](const Shape&) { return Shape{2, 2, 4}; }, [](const Idx& i) { return Idx{i[0], i[1] + 1, i[2]}; }),
      mapped("slice_negative_start", k234, [](auto& x) { return x.slice(2, -3, std::nullopt, 2); },
             [](const Shape&) { return Shape{2, 3, 2}; }, [](const Idx& i) { return Idx{i[0], i[1], 1 + 2 * i[2]}; }),
      mapped("select", k234, [](auto& x) { return select(x, 1, -1); }, [](const Shape&) { return Shape{2, 4}; },
             [](const Idx& i) { return Idx{i[0], 2, i[1]}; }),
      mapped("select_to_0d", {{{5}}}, [](auto& x) { return x[3]; }, [](const Shape&) { return Shape{}; },
             [](const Idx&) { return Idx{3}; }),
      mapped("repeat", {{{2, 3}}}, [](auto& x) { return x.repeat({2, 1, 2}); },
             [](const Shape&) { return Shape{2, 2, 6}; }, [](const Idx& i) { return Idx{i[1], i[2] % 3}; }),
      mapped("clone", {{{2, 3}}, {{}}}, [](auto& x) { return clone(x); }, [](const Shape& s) { return s; },
             [](const Idx& i) { return i; }),
      mapped("contiguous", {{{2, 3}}, {{}}}, [](auto& x) { return x.contiguous(); }, [](const Shape& s) { return s; },
             [](const Idx& i) { return i; }),
      mapped("index_slices", k234, [](auto& x) { return x.index({Slice(1, std::nullopt), Slice(), Slice(std::nullopt, std::nullopt, 3)}); },
             [](const Shape&) { return Shape{1, 3, 2}; }, [](const Idx& i) { return Idx{1, i[1], 3 * i[2]}; }),
      mapped("index_int_ellipsis_none", k234, [](auto& x) { return x.index({1, "...", indexing::None}); },
             [](const Shape&) { return Shape{3, 4, 1}; }, [](const Idx& i) { return Idx{1, i[0], i[1]}; }),
      mapped("index_negative_slice", k234, [](auto& x) { return x.index({Slice(), -1, Slice(-3, -1)}); },
             [](const Shape&) { return Shape{2, 2}; }, [](const Idx& i) { return Idx{i[0], 2, 1 + i[1]}; }),
      // Several tensor indices: broadcast together; in place of consecutive dims, in front otherwise.
      mapped("index_tensors_adjacent", k234,
             [](auto& x) { return x.index({Slice(), tensor({2, 0, 2}), tensor({1, 3, 0})}); },
             [](const Shape&) { return Shape{2, 3}; },
             [](const Idx& i) { return Idx{i[0], Shape{2, 0, 2}[i[1]], Shape{1, 3, 0}[i[1]]}; }),
      mapped("index_tensors_apart", k234, [](auto& x) { return x.index({tensor({1, 0}), Slice(), tensor({3, -3})}); },
             [](const Shape&) { return Shape{2, 3}; },
             [](const Idx& i) { return Idx{Shape{1, 0}[i[0]], i[1], Shape{3, 1}[i[0]]}; }),
      mapped("index_tensors_broadcast_negative", k234,
             [](auto& x) { return x.index({tensor({1, 0}).reshape({2, 1}), tensor({-1, 0, 1})}); },
             [](const Shape&) { return Shape{2, 3, 4}; },
             [](const Idx& i) { return Idx{Shape{1, 0}[i[0]], Shape{2, 0, 1}[i[1]], i[2]}; }),
      mapped("index_mask_and_tensor", k234,
             [](auto& x) { return x.index({Slice(), tensor({true, false, true}), tensor({3, 0})}); },
             [](const Shape&) { return Shape{2, 2}; },
             [](const Idx& i) { return Idx{i[0], Shape{0, 2}[i[1]], Shape{3, 0}[i[1]]}; }),
  };
  rows[0].contiguous_only = true;  // view
  return with_specials(std::move(rows));
}

std::vector<OpRow> join_rows() {
  return with_specials({
      {.name = "chunk",
       .samples = {{{2, 7}}},
       .op = [](const In& x) { return chunk(x[0], 3, 1); },
       .ref = [](const Refs& x) { return pieces(x[0], 1, {3, 3, 1}); }},
      {.name = "split",
       .samples = {{{5, 3}}},
       .op = [](const In& x) { return split(x[0], 2); },
       .ref = [](const Refs& x) { return pieces(x[0], 0, {2, 2, 1}); }},
      {.name = "split_with_sizes",
       .samples = {{{2, 4}}},
       .op = [](const In& x) { return x[0].split_with_sizes({1, 3}, -1); },
       .ref = [](const Refs& x) { return pieces(x[0], 1, {1, 3}); }},
      {.name = "unbind",
       .samples = {{{2, 3}}},
       .op = [](const In& x) { return unbind(x[0], 1); },
       .ref = [](const Refs& x) { return pieces(x[0], 1, {1, 1, 1}, true); }},
      {.name = "cat",
       .samples = {{{2, 3}, {4, 3}}, {{1, 3}, {1, 3}, {2, 3}}},
       .op = [](const In& x) { return Out{cat(x, 0)}; },
       .ref = [](const Refs& x) {
         Shape s = x[0].shape;
         s[0] = 0;
         for (const Nd& p : x) s[0] += p.shape[0];
         return Refs{build(s, [&](Idx i) {
           size_t k = 0;
           while (i[0] >= x[k].shape[0]) i[0] -= x[k++].shape[0];
           return x[k].at(i);
         })};
       }},
      {.name = "cat_dim1",
       .samples = {{{2, 1}, {2, 3}, {2, 2}}},
       .op = [](const In& x) { return Out{cat(x, -1)}; },
       .ref = [](const Refs& x) {
         return Refs{build({2, 6}, [&](Idx i) {
           size_t k = 0;
           while (i[1] >= x[k].shape[1]) i[1] -= x[k++].shape[1];
           return x[k].at(i);
         })};
       }},
      {.name = "stack",
       .samples = {{{2, 3}, {2, 3}}, {{}, {}, {}}},
       .op = [](const In& x) { return Out{stack(x)}; },
       .ref = [](const Refs& x) {
         Shape s = x[0].shape;
         s.insert(s.begin(), static_cast<int64_t>(x.size()));
         return Refs{build(s, [&](const Idx& i) { return x[i[0]].at(Idx(i.begin() + 1, i.end())); })};
       }},
      {.name = "stack_last",
       .samples = {{{2, 3}, {2, 3}, {2, 3}}},
       .op = [](const In& x) { return Out{stack(x, -1)}; },
       .ref = [](const Refs& x) {
         return Refs{build({2, 3, 3}, [&](const Idx& i) { return x[i[2]].at({i[0], i[1]}); })};
       }},
      {.name = "to_float32",
       .samples = {{{2, 3}}, {{}}},
       .op = [](const In& x) { return Out{x[0].to(kFloat32)}; },
       .ref = [](const Refs& x) { return Refs{map(x[0], [](double v) { return double(float(v)); }, kFloat32)}; },
       .atol = 0, .rtol = 0, .fixed_dtype = true, .grad_eps = 1e-2},
      {.name = "to_int64",
       .samples = {{{2, 3}}},
       .op = [](const In& x) { return Out{x[0].to(kInt64)}; },
       .ref = [](const Refs& x) { return Refs{map(x[0], [](double v) { return std::trunc(v); }, kInt64)}; },
       .domains = {real(-5, 5)}, .differentiable = false, .fixed_dtype = true},
  });
}

std::vector<OpRow> indexing_rows() {
  return with_specials({
      {.name = "index_int64_tensor",
       .samples = {{{4, 3}, {5}}, {{4, 3}, {2, 2}}},
       .op = [](const In& x) { return Out{x[0].index({x[1]})}; },
       .ref = [](const Refs& x) { return Refs{take(x[0], 0, x[1])}; },
       .domains = {Domain{}, index_below(4)}},
      {.name = "index_int64_tensor_dim1",
       .samples = {{{2, 5}, {3}}},
       .op = [](const In& x) { return Out{x[0].index({Slice(), x[1]})}; },
       .ref = [](const Refs& x) { return Refs{take(x[0], 1, x[1])}; },
       .domains = {Domain{}, index_below(5)}},
      {.name = "index_bool_tensor",
       .samples = {{{4, 3}, {4, 3}}, {{4, 3}, {4}}},
       .op = [](const In& x) { return Out{x[0].index({x[1]})}; },
       .ref = [](const Refs& x) {
         std::vector<double> v;  // rows (or elements) where the mask is true, in order
         const int64_t inner = x[0].numel() / x[1].numel();
         for (int64_t m = 0; m < x[1].numel(); ++m)
           if (x[1].v[m] != 0) v.insert(v.end(), x[0].v.begin() + m * inner, x[0].v.begin() + (m + 1) * inner);
         Shape s{static_cast<int64_t>(v.size()) / inner};
         if (inner > 1) s.push_back(inner);
         return Refs{Nd{s, v}};
       },
       .domains = {Domain{}, boolean()}},
      {.name = "index_select",
       .samples = {{{4, 3}, {5}}},
       .op = [](const In& x) { return Out{index_select(x[0], 0, x[1])}; },
       .ref = [](const Refs& x) { return Refs{take(x[0], 0, x[1])}; },
       .domains = {Domain{}, index_below(3)}},
      {.name = "index_select_dim1",
       .samples = {{{2, 4, 3}, {4}}},
       .op = [](const In& x) { return Out{x[0].index_select(1, x[1])}; },
       .ref = [](const Refs& x) { return Refs{take(x[0], 1, x[1])}; },
       .domains = {Domain{}, index_below(4)}},
      {.name = "gather_dim1",
       .samples = {{{3, 4}, {3, 2}}, {{3, 4}, {2, 5}}},
       .op = [](const In& x) { return Out{gather(x[0], 1, x[1])}; },
       .ref = [](const Refs& x) {
         return Refs{build(x[1].shape, [&](const Idx& i) { return x[0].at({i[0], int64_t(x[1].at(i))}); })};
       },
       .domains = {Domain{}, index_below(4)}},
      {.name = "gather_dim0",
       .samples = {{{3, 4}, {2, 4}}},
       .op = [](const In& x) { return Out{x[0].gather(0, x[1])}; },
       .ref = [](const Refs& x) {
         return Refs{build(x[1].shape, [&](const Idx& i) { return x[0].at({int64_t(x[1].at(i)), i[1]}); })};
       },
       .domains = {Domain{}, index_below(3)}},
      {.name = "scatter_add",
       .samples = {{{3, 4}, {3, 5}, {3, 5}}, {{3, 4}, {2, 3}, {3, 5}}},
       .op = [](const In& x) { return Out{scatter_add(x[0], 1, x[1], x[2])}; },
       .ref = [](const Refs& x) {
         Nd r = x[0];
         for (int64_t f = 0; f < x[1].numel(); ++f) {
           const Idx i = unravel(x[1].shape, f);
           r.at({i[0], int64_t(x[1].v[f])}) += x[2].at(i);
         }
         return Refs{r};
       },
       .domains = {Domain{}, index_below(4), Domain{}}},
      {.name = "masked_select",
       .samples = {{{2, 3}, {2, 3}}, {{2, 3}, {3}}},
       .op = [](const In& x) { return Out{masked_select(x[0], x[1])}; },
       .ref = [](const Refs& x) {
         std::vector<double> v;
         for (int64_t f = 0; f < x[0].numel(); ++f)
           if (x[1].v[f % x[1].numel()] != 0) v.push_back(x[0].v[f]);
         return Refs{Nd{{static_cast<int64_t>(v.size())}, v}};
       },
       .domains = {Domain{}, boolean()}},
  });
}

COHORT_OP_ROWS("shape", shape_rows);
COHORT_OP_ROWS("join", join_rows);
COHORT_OP_ROWS("indexing", indexing_rows);

}  // namespace
}  // namespace cohort::testing
