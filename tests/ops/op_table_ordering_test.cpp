// Op-table rows for ops that work along a lane or on a matrix's triangle: cumsum, sort, argsort,
// topk, tril, triu and baddbmm. References sort or sum each lane with plain loops; the Real domain
// has no ties, so every order is unique (ties and NaN are checked in tests/ops/sorting_test.cpp).
#include <algorithm>
#include <numeric>

#include "cohort/ops/linalg.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/sorting.h"
#include "support/op_table.h"

namespace cohort::testing {
namespace {

using Idx = std::vector<int64_t>;

// out lane = f(x lane) along dim, where f may shorten the lane (to k).
Nd lanes(const Nd& x, int64_t dim, int64_t k, const std::function<std::vector<double>(const std::vector<double>&)>& f,
         DType dtype = kFloat64) {
  if (dim < 0) dim += x.dim();
  Shape s = x.shape;
  s[dim] = k;
  Nd r = zeros_nd(s, dtype);
  for (int64_t i = 0; i < x.numel(); ++i) {
    Idx idx = unravel(x.shape, i);
    if (idx[dim] != 0) continue;
    std::vector<double> lane;
    for (idx[dim] = 0; idx[dim] < x.shape[dim]; ++idx[dim]) lane.push_back(x.at(idx));
    const std::vector<double> out = f(lane);
    for (idx[dim] = 0; idx[dim] < k; ++idx[dim]) r.at(idx) = out[idx[dim]];
  }
  return r;
}

// The positions of a lane in ascending (or descending) order of value.
std::vector<double> order_of(const std::vector<double>& lane, bool descending) {
  std::vector<int64_t> p(lane.size());
  std::iota(p.begin(), p.end(), 0);
  std::stable_sort(p.begin(), p.end(), [&](int64_t a, int64_t b) {
    return descending ? lane[a] > lane[b] : lane[a] < lane[b];
  });
  return {p.begin(), p.end()};
}

// (values, indices) of the first k of each lane's order.
Refs sorted(const Nd& x, int64_t dim, int64_t k, bool descending) {
  auto pick = [&](const std::vector<double>& lane) {
    std::vector<double> v;
    for (double i : order_of(lane, descending)) v.push_back(lane[static_cast<size_t>(i)]);
    return v;
  };
  return {lanes(x, dim, k, pick), lanes(x, dim, k, [&](const auto& l) { return order_of(l, descending); }, kInt64)};
}

std::vector<OpRow> ordering_rows() {
  return {
      {.name = "cumsum",
       .samples = {{{5}}, {{3, 4}}, {{2, 3, 4}}},
       .op = [](const In& x) { return Out{cumsum(x[0], x[0].dim() - 1)}; },
       .ref = [](const Refs& x) {
         return Refs{along(x[0], -1, [](std::vector<double> l) { return std::partial_sum(l.begin(), l.end(), l.begin()), l; })};
       }},
      {.name = "cumsum_dim0",
       .samples = {{{4, 3}}, {{}}},
       .op = [](const In& x) { return Out{x[0].cumsum(0)}; },
       .ref = [](const Refs& x) {
         if (x[0].dim() == 0) return Refs{x[0]};
         return Refs{along(x[0], 0, [](std::vector<double> l) { return std::partial_sum(l.begin(), l.end(), l.begin()), l; })};
       }},
      {.name = "cumsum_integers",
       .samples = {{{3, 4}}},
       .op = [](const In& x) { return Out{cumsum(x[0].to(kInt32), 1)}; },
       .ref = [](const Refs& x) {
         Nd r = along(x[0], 1, [](std::vector<double> l) { return std::partial_sum(l.begin(), l.end(), l.begin()), l; });
         r.dtype = kInt64;
         return Refs{r};
       },
       .domains = {integers(-5, 5)},
       .differentiable = false,
       .fixed_dtype = true},
      {.name = "sort",
       .samples = {{{6}}, {{3, 5}}, {{2, 4, 3}}},
       .op = [](const In& x) { auto [v, i] = sort(x[0]); return Out{v, i}; },
       .ref = [](const Refs& x) { return sorted(x[0], -1, x[0].size(-1), false); }},
      {.name = "sort_descending_dim0",
       .samples = {{{5, 3}}, {{4, 2, 3}}},
       .op = [](const In& x) { auto [v, i] = x[0].sort(0, true); return Out{v, i}; },
       .ref = [](const Refs& x) { return sorted(x[0], 0, x[0].size(0), true); }},
      {.name = "argsort",
       .samples = {{{3, 5}}},
       .op = [](const In& x) { return Out{argsort(x[0], 1, true)}; },
       .ref = [](const Refs& x) { return Refs{sorted(x[0], 1, 5, true)[1]}; },
       .differentiable = false},
      {.name = "topk",
       .samples = {{{7}}, {{3, 6}}, {{2, 5, 3}}},
       .op = [](const In& x) { auto [v, i] = topk(x[0], 2, x[0].dim() == 3 ? 1 : -1); return Out{v, i}; },
       .ref = [](const Refs& x) { return sorted(x[0], x[0].dim() == 3 ? 1 : -1, 2, true); }},
      {.name = "topk_smallest",
       .samples = {{{4, 6}}},
       .op = [](const In& x) { auto [v, i] = x[0].topk(3, 1, /*largest=*/false); return Out{v, i}; },
       .ref = [](const Refs& x) { return sorted(x[0], 1, 3, false); }},
      {.name = "tril",
       .samples = {{{4, 4}}, {{3, 5}}, {{2, 4, 3}}},
       .op = [](const In& x) { return Out{tril(x[0])}; },
       .ref = [](const Refs& x) {
         return Refs{build(x[0].shape, [&](const Idx& i) { return i.back() - i[i.size() - 2] <= 0 ? x[0].at(i) : 0.0; })};
       }},
      {.name = "tril_diagonals",
       .samples = {{{4, 5}}},
       .op = [](const In& x) { return Out{x[0].tril(1), x[0].tril(-2)}; },
       .ref = [](const Refs& x) {
         return Refs{build(x[0].shape, [&](const Idx& i) { return i[1] - i[0] <= 1 ? x[0].at(i) : 0.0; }),
                     build(x[0].shape, [&](const Idx& i) { return i[1] - i[0] <= -2 ? x[0].at(i) : 0.0; })};
       }},
      {.name = "triu",
       .samples = {{{4, 4}}, {{2, 3, 5}}},
       .op = [](const In& x) { return Out{triu(x[0]), x[0].triu(2), triu(x[0], -1)}; },
       .ref = [](const Refs& x) {
         auto keep = [&](int64_t d) {
           return build(x[0].shape, [&, d](const Idx& i) { return i.back() - i[i.size() - 2] >= d ? x[0].at(i) : 0.0; });
         };
         return Refs{keep(0), keep(2), keep(-1)};
       }},
      {.name = "baddbmm",
       .samples = {{{2, 3, 4}, {2, 3, 5}, {2, 5, 4}}, {{4}, {2, 3, 5}, {2, 5, 4}}, {{3, 1}, {1, 3, 2}, {1, 2, 4}}},
       .op = [](const In& x) { return Out{baddbmm(x[0], x[1], x[2], 0.5, 2)}; },
       .ref = [](const Refs& x) {
         const Nd &a = x[1], &b = x[2];
         const Shape s{a.size(0), a.size(1), b.size(2)};
         const Nd in = map2(x[0], zeros_nd(s), [](double v, double) { return v; });
         return Refs{build(s, [&](const Idx& i) {
           double acc = 0;
           for (int64_t k = 0; k < a.size(2); ++k) acc += a.at({i[0], i[1], k}) * b.at({i[0], k, i[2]});
           return 0.5 * in.at(i) + 2 * acc;
         })};
       }},
  };
}

COHORT_OP_ROWS("ordering", ordering_rows);

}  // namespace
}  // namespace cohort::testing
