// Op-table rows for scatter, index_add and masked_scatter (values written at indexed places), and
// for nonzero and unique (not differentiable: their outputs are indices and selected values).
#include <map>
#include <set>

#include "cohort/ops/scatter.h"
#include "cohort/ops/unique.h"
#include "support/op_table.h"

namespace cohort::testing {
namespace {

using Idx = std::vector<int64_t>;

// x with src[i] written at i with dim replaced by index[i], for each i of index in row-major order.
Nd scattered(const Nd& x, int64_t dim, const Nd& index, const std::function<double(const Idx&)>& value) {
  Nd r = x;
  for (int64_t f = 0; f < index.numel(); ++f) {
    Idx i = unravel(index.shape, f);
    Idx to = i;
    to[dim] = static_cast<int64_t>(index.v[f]);
    r.at(to) = value(i);
  }
  return r;
}

std::vector<OpRow> scatter_rows() {
  std::vector<OpRow> rows = {
      // One index per row along dim 1, so no place is written twice (which write wins would be
      // unspecified, and src's gradient with it).
      {.name = "scatter",
       .samples = {{{3, 4}, {3, 1}, {3, 5}}},
       .op = [](const In& x) { return Out{scatter(x[0], 1, x[1], x[2])}; },
       .ref = [](const Refs& x) { return Refs{scattered(x[0], 1, x[1], [&](const Idx& i) { return x[2].at(i); })}; },
       .domains = {Domain{}, index_below(4), Domain{}}},
      {.name = "scatter_dim0",
       .samples = {{{3, 4}, {1, 4}, {2, 5}}},
       .op = [](const In& x) { return Out{scatter(x[0], 0, x[1], x[2])}; },
       .ref = [](const Refs& x) { return Refs{scattered(x[0], 0, x[1], [&](const Idx& i) { return x[2].at(i); })}; },
       .domains = {Domain{}, index_below(3), Domain{}}},
      {.name = "scatter_value",
       .samples = {{{3, 4}, {3, 2}}, {{2, 5}, {2, 5}}},
       .op = [](const In& x) { return Out{scatter(x[0], 1, x[1], 0.5)}; },
       .ref = [](const Refs& x) { return Refs{scattered(x[0], 1, x[1], [](const Idx&) { return 0.5; })}; },
       .domains = {Domain{}, index_below(4)}},
      // Repeated indices add up.
      {.name = "index_add",
       .samples = {{{4, 3}, {5}, {5, 3}}},
       .op = [](const In& x) { return Out{index_add(x[0], 0, x[1], x[2], 2.0)}; },
       .ref = [](const Refs& x) {
         Nd r = x[0];
         for (int64_t k = 0; k < 5; ++k)
           for (int64_t c = 0; c < 3; ++c) r.at({static_cast<int64_t>(x[1].v[k]), c}) += 2.0 * x[2].at({k, c});
         return Refs{r};
       },
       .domains = {Domain{}, index_below(4), Domain{}}},
      {.name = "index_add_dim1",
       .samples = {{{2, 4}, {3}, {2, 3}}},
       .op = [](const In& x) { return Out{index_add(x[0], -1, x[1], x[2])}; },
       .ref = [](const Refs& x) {
         Nd r = x[0];
         for (int64_t k = 0; k < 3; ++k)
           for (int64_t b = 0; b < 2; ++b) r.at({b, static_cast<int64_t>(x[1].v[k])}) += x[2].at({b, k});
         return Refs{r};
       },
       .domains = {Domain{}, index_below(4), Domain{}}},
      {.name = "masked_scatter",
       .samples = {{{2, 3}, {2, 3}, {7}}, {{2, 3}, {3}, {2, 4}}},
       .op = [](const In& x) { return Out{masked_scatter(x[0], x[1], x[2])}; },
       .ref = [](const Refs& x) {
         Nd r = x[0];
         int64_t next = 0;
         for (int64_t f = 0; f < r.numel(); ++f)
           if (x[1].v[f % x[1].numel()] != 0) r.v[f] = x[2].v[next++];
         return Refs{r};
       },
       .domains = {Domain{}, boolean(), Domain{}}},
  };
  for (OpRow& r : rows) r.specials = true;  // values are only moved and added
  return rows;
}

Nd int64_nd(Shape shape, std::vector<double> v) { return Nd{std::move(shape), std::move(v), kInt64}; }

std::vector<OpRow> unique_rows() {
  return {
      {.name = "nonzero",
       .samples = {{{3, 4}}, {{5}}},
       .op = [](const In& x) { return Out{nonzero(x[0])}; },
       .ref = [](const Refs& x) {
         std::vector<double> v;
         for (int64_t f = 0; f < x[0].numel(); ++f)
           if (x[0].v[f] != 0)
             for (int64_t i : unravel(x[0].shape, f)) v.push_back(static_cast<double>(i));
         return Refs{int64_nd({static_cast<int64_t>(v.size()) / x[0].dim(), x[0].dim()}, v)};
       },
       .domains = {integers(-1, 1)}, .differentiable = false},
      {.name = "unique",
       .samples = {{{3, 4}}, {{7}}},
       .op = [](const In& x) {
         auto [values, inverse, counts] = _unique2(x[0], true, true, true);
         return Out{values, inverse, counts};
       },
       .ref = [](const Refs& x) {
         std::map<double, int64_t> count;
         for (double v : x[0].v) ++count[v];
         std::vector<double> values, counts, inverse;
         for (auto [v, n] : count) values.push_back(v), counts.push_back(static_cast<double>(n));
         for (double v : x[0].v)
           inverse.push_back(static_cast<double>(std::distance(count.begin(), count.find(v))));
         const int64_t k = static_cast<int64_t>(values.size());
         return Refs{Nd{{k}, values}, int64_nd(x[0].shape, inverse), int64_nd({k}, counts)};
       },
       .domains = {integers(-2, 2)}, .differentiable = false},
      // Columns (dim 1) compared as whole slices, in lexicographic order.
      {.name = "unique_dim",
       .samples = {{{3, 6}}},
       .op = [](const In& x) {
         auto [values, inverse, counts] = unique_dim(x[0], 1, true, true, true);
         return Out{values, inverse, counts};
       },
       .ref = [](const Refs& x) {
         const int64_t rows = x[0].shape[0], cols = x[0].shape[1];
         std::map<std::vector<double>, int64_t> count;
         std::vector<std::vector<double>> column(cols);
         for (int64_t c = 0; c < cols; ++c) {
           for (int64_t r = 0; r < rows; ++r) column[c].push_back(x[0].at({r, c}));
           ++count[column[c]];
         }
         const int64_t k = static_cast<int64_t>(count.size());
         std::vector<double> counts, inverse;
         for (auto& [col, n] : count) counts.push_back(static_cast<double>(n));
         for (int64_t c = 0; c < cols; ++c)
           inverse.push_back(static_cast<double>(std::distance(count.begin(), count.find(column[c]))));
         Nd values = build({rows, k}, [&](const Idx& i) { return std::next(count.begin(), i[1])->first[i[0]]; });
         return Refs{values, int64_nd({cols}, inverse), int64_nd({k}, counts)};
       },
       .domains = {integers(0, 1)}, .differentiable = false},
  };
}

COHORT_OP_ROWS("scatter", scatter_rows);
COHORT_OP_ROWS("unique", unique_rows);

}  // namespace
}  // namespace cohort::testing
