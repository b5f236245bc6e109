// Op-table rows for reductions (sum mean prod max min amax amin argmax argmin norm var std) and the
// softmax family with its backward ops. References gather each reduced group with support/op_table.h's reduce() and fold
// it with a plain loop, with PyTorch's rules for NaN and inf (every row also runs with them): max
// and min are NaN where the group holds one, argmax/argmin point at its first NaN, logsumexp
// treats an infinite maximum as 0, softmax subtracts the maximum (a row with +inf, or only -inf,
// is NaN). tests/fixtures/specials.json pins these against PyTorch.
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "cohort/ops/reduction.h"
#include "cohort/ops/softmax.h"
#include "support/op_table.h"

namespace cohort::testing {
namespace {

using S = std::vector<std::vector<Shape>>;
using Group = std::vector<double>;
using Fold = std::function<double(const Group&)>;

constexpr double inf = std::numeric_limits<double>::infinity();
const S kAll = {{{2, 3}}, {{}}, {{2, 3, 4}}, {{5}}};
const S k3d = {{{2, 3, 4}}, {{3, 1, 2}}};

double sum_of(const Group& g) { return std::accumulate(g.begin(), g.end(), 0.0); }
double mean_of(const Group& g) { return sum_of(g) / g.size(); }
double prod_of(const Group& g) { return std::accumulate(g.begin(), g.end(), 1.0, std::multiplies<>()); }
// The position of the first NaN, or g.size().
size_t first_nan(const Group& g) { return std::find_if(g.begin(), g.end(), [](double v) { return std::isnan(v); }) - g.begin(); }
double max_of(const Group& g) { return first_nan(g) < g.size() ? NAN : *std::max_element(g.begin(), g.end()); }
double min_of(const Group& g) { return first_nan(g) < g.size() ? NAN : *std::min_element(g.begin(), g.end()); }
double argmax_of(const Group& g) {
  return double(first_nan(g) < g.size() ? first_nan(g) : std::max_element(g.begin(), g.end()) - g.begin());
}
double argmin_of(const Group& g) {
  return double(first_nan(g) < g.size() ? first_nan(g) : std::min_element(g.begin(), g.end()) - g.begin());
}
Fold var_of(bool unbiased) {
  return [unbiased](const Group& g) {
    const double m = mean_of(g);
    double s = 0;
    for (double v : g) s += (v - m) * (v - m);
    return s / (g.size() - (unbiased ? 1 : 0));
  };
}
Fold std_of(bool unbiased) { return [unbiased](const Group& g) { return std::sqrt(var_of(unbiased)(g)); }; }
Fold norm_of(double p) {
  return [p](const Group& g) {
    double s = 0;
    for (double v : g) s = std::isinf(p) ? (std::isnan(v) ? v : std::max(s, std::abs(v))) : s + std::pow(std::abs(v), p);
    if (std::isinf(p) && first_nan(g) < g.size()) return double(NAN);
    return std::isinf(p) ? s : std::pow(s, 1 / p);
  };
}
// PyTorch's logsumexp: an infinite maximum is taken as 0, so [inf, inf] gives inf, [-inf, -inf] -inf.
double logsumexp_of(const Group& g) {
  double m = max_of(g);
  if (std::isinf(m)) m = 0;
  double s = 0;
  for (double v : g) s += std::exp(v - m);
  return m + std::log(s);
}

// A reduction over all elements, or over dims (then the samples are 3-d).
OpRow reduction(std::string name, std::function<Tensor(const Tensor&)> op, Fold fold,
                std::vector<int64_t> dims = {}, bool keepdim = false, DType dtype = kFloat64) {
  return {.name = std::move(name),
          .samples = dims.empty() ? kAll : k3d,
          .op = [op](const In& x) { return Out{op(x[0])}; },
          .ref = [=](const Refs& x) { return Refs{reduce(x[0], dims, keepdim, fold, dtype)}; },
          .differentiable = dtype == kFloat64};
}

// max/min along a dim: values and int64 indices.
OpRow with_indices(std::string name, std::function<std::tuple<Tensor, Tensor>(const Tensor&)> op, Fold value,
                   Fold index, int64_t dim, bool keepdim) {
  return {.name = std::move(name),
          .samples = {{{2, 3, 4}}, {{3, 1, 2}}, {{5}}},
          .op = [op](const In& x) {
            auto [v, i] = op(x[0]);
            return Out{v, i};
          },
          .ref = [=](const Refs& x) {
            const int64_t d = x[0].dim() == 1 ? 0 : dim;
            return Refs{reduce(x[0], {d}, keepdim, value), reduce(x[0], {d}, keepdim, index, kInt64)};
          }};
}

OpRow softmax_like(std::string name, std::function<Tensor(const Tensor&)> op, int64_t dim, bool log) {
  return {.name = std::move(name),
          .samples = {{{2, 3, 4}}, {{3, 1, 2}}},
          .op = [op](const In& x) { return Out{op(x[0])}; },
          .ref = [=](const Refs& x) {
            return Refs{along(x[0], dim, [log](const Group& g) {
              // PyTorch's kernel: shift by the maximum (inf - inf is NaN), then normalise.
              const double m = max_of(g);
              double s = 0;
              for (double v : g) s += std::exp(v - m);
              const double lse = m + std::log(s);
              Group r;
              for (double v : g) r.push_back(log ? v - lse : std::exp(v - lse));
              return r;
            })};
          },
          .domains = {real(-4, 4)}};
}

// The backward ops of softmax (y (g - sum(g y))) and log_softmax (g - exp(y) sum(g)) along dim, on
// inputs g and y; y in log_softmax's range for log, softmax's for softmax.
OpRow softmax_backward_like(std::string name, int64_t dim, bool log, S samples) {
  return {.name = std::move(name),
          .samples = std::move(samples),
          .op = [=](const In& x) {
            return Out{log ? _log_softmax_backward_data(x[0], x[1], dim, x[0].dtype())
                           : _softmax_backward_data(x[0], x[1], dim, x[0].dtype())};
          },
          .ref = [=](const Refs& x) {
            const Nd &g = x[0], &y = x[1];
            const int64_t d = dim < 0 ? dim + g.dim() : dim;
            return Refs{build(g.shape, [&](const std::vector<int64_t>& i) {
              std::vector<int64_t> j = i;
              double s = g.dim() == 0 ? (log ? g.v[0] : g.v[0] * y.v[0]) : 0;  // 0-d: a lane of one
              for (int64_t k = 0; g.dim() > 0 && k < g.size(d); ++k) {
                j[d] = k;
                s += log ? g.at(j) : g.at(j) * y.at(j);
              }
              return log ? g.at(i) - std::exp(y.at(i)) * s : y.at(i) * (g.at(i) - s);
            })};
          },
          .domains = {real(-2, 2), log ? real(-3, 0) : real(0, 1)}};
}

std::vector<OpRow> reduction_rows() {
  std::vector<OpRow> rows = {
      reduction("sum", [](auto& x) { return sum(x); }, sum_of),
      reduction("sum_dim", [](auto& x) { return sum(x, {1}); }, sum_of, {1}),
      reduction("sum_dims_keepdim", [](auto& x) { return x.sum({0, 2}, true); }, sum_of, {0, 2}, true),
      reduction("sum_negative_dim", [](auto& x) { return sum(x, {-1}); }, sum_of, {-1}),
      reduction("mean", [](auto& x) { return mean(x); }, mean_of),
      reduction("mean_dims", [](auto& x) { return mean(x, {0, 2}); }, mean_of, {0, 2}),
      reduction("mean_dim_keepdim", [](auto& x) { return x.mean({1}, true); }, mean_of, {1}, true),
      reduction("prod", [](auto& x) { return prod(x); }, prod_of),
      reduction("max", [](auto& x) { return max(x); }, max_of),
      reduction("min", [](auto& x) { return x.min(); }, min_of),
      reduction("amax", [](auto& x) { return amax(x); }, max_of),
      reduction("amax_dims", [](auto& x) { return amax(x, {0, 2}); }, max_of, {0, 2}),
      reduction("amin_dim_keepdim", [](auto& x) { return amin(x, {1}, true); }, min_of, {1}, true),
      reduction("argmax", [](auto& x) { return argmax(x); }, argmax_of, {}, false, kInt64),
      reduction("argmin", [](auto& x) { return x.argmin(); }, argmin_of, {}, false, kInt64),
      reduction("argmax_dim", [](auto& x) { return argmax(x, 1); }, argmax_of, {1}, false, kInt64),
      reduction("argmin_dim_keepdim", [](auto& x) { return argmin(x, 2, true); }, argmin_of, {2}, true, kInt64),
      reduction("norm_1", [](auto& x) { return norm(x, 1); }, norm_of(1)),
      reduction("norm_2", [](auto& x) { return norm(x); }, norm_of(2)),
      reduction("norm_3", [](auto& x) { return norm(x, 3); }, norm_of(3)),
      reduction("norm_inf", [](auto& x) { return norm(x, inf); }, norm_of(inf)),
      reduction("norm_2_dim", [](auto& x) { return norm(x, 2, {1}); }, norm_of(2), {1}),
      reduction("norm_1_dims_keepdim", [](auto& x) { return norm(x, 1, {0, 2}, true); }, norm_of(1), {0, 2}, true),
      reduction("norm_3_dim", [](auto& x) { return x.norm(3, {-1}); }, norm_of(3), {-1}),
      reduction("norm_inf_dim", [](auto& x) { return norm(x, inf, {2}); }, norm_of(inf), {2}),
      reduction("var", [](auto& x) { return var(x); }, var_of(true)),
      reduction("var_biased", [](auto& x) { return var(x, false); }, var_of(false)),
      reduction("var_dims", [](auto& x) { return var(x, {0, 2}); }, var_of(true), {0, 2}),
      reduction("var_dim_biased_keepdim", [](auto& x) { return var(x, {1}, false, true); }, var_of(false), {1}, true),
      reduction("std", [](auto& x) { return x.std(); }, std_of(true)),
      reduction("std_biased", [](auto& x) { return std(x, false); }, std_of(false)),
      reduction("std_dim", [](auto& x) { return std(x, Shape{2}); }, std_of(true), {2}),
      reduction("std_dims_biased_keepdim", [](auto& x) { return std(x, {0, 1}, false, true); }, std_of(false),
                {0, 1}, true),
      reduction("logsumexp_dim", [](auto& x) { return logsumexp(x, {1}); }, logsumexp_of, {1}),
      reduction("logsumexp_dims_keepdim", [](auto& x) { return logsumexp(x, {0, 2}, true); }, logsumexp_of,
                {0, 2}, true),
      with_indices("max_dim", [](auto& x) { return max(x, x.dim() == 1 ? 0 : 1); }, max_of, argmax_of, 1, false),
      with_indices("max_dim_keepdim", [](auto& x) { return x.max(x.dim() == 1 ? 0 : 2, true); }, max_of, argmax_of,
                   2, true),
      with_indices("min_dim", [](auto& x) { return min(x, 0); }, min_of, argmin_of, 0, false),
      with_indices("min_dim_keepdim", [](auto& x) { return min(x, x.dim() == 1 ? 0 : -2, true); }, min_of,
                   argmin_of, -2, true),
      softmax_like("softmax_dim1", [](auto& x) { return softmax(x, 1); }, 1, false),
      softmax_like("softmax_last", [](auto& x) { return x.softmax(-1); }, -1, false),
      softmax_like("softmax_dim0", [](auto& x) { return softmax(x, 0); }, 0, false),
      softmax_like("log_softmax_dim1", [](auto& x) { return log_softmax(x, 1); }, 1, true),
      softmax_like("log_softmax_last", [](auto& x) { return x.log_softmax(-1); }, -1, true),
  };
  for (OpRow& r : rows)
    if (r.name == "prod") r.domains = {real(0.5, 1.5)};  // keeps the product of 24 values near 1
  for (OpRow& r : rows) r.specials = true;  // every row runs with NaN and +-inf too
  const S pairs3d = {{{2, 3, 4}, {2, 3, 4}}, {{3, 1, 2}, {3, 1, 2}}};
  const S pairs_last = {{{2, 3, 20}, {2, 3, 20}}, {{5}, {5}}, {{}, {}}};
  rows.push_back(softmax_backward_like("softmax_backward_dim1", 1, false, pairs3d));
  rows.push_back(softmax_backward_like("softmax_backward_last", -1, false, pairs_last));
  rows.push_back(softmax_backward_like("log_softmax_backward_dim0", 0, true, pairs3d));
  rows.push_back(softmax_backward_like("log_softmax_backward_last", -1, true, pairs_last));
  // A single element has no unbiased variance (nan), so those rows skip the 0-d sample.
  for (OpRow& r : rows)
    if (r.name == "var" || r.name == "std") r.samples = {{{2, 3}}, {{2, 3, 4}}, {{5}}};
  return rows;
}
COHORT_OP_ROWS("reduction", reduction_rows);

}  // namespace
}  // namespace cohort::testing
