// Op-table rows for the matrix products: mm bmm matmul (1-d, 2-d, batched with broadcasting) addmm
// dot outer einsum. One naive reference, numpy's matmul with triple loops, serves all but einsum.
#include "cohort/ops/linalg.h"
#include "support/op_table.h"

namespace cohort::testing {
namespace {

using Idx = std::vector<int64_t>;

// numpy matmul: a 1-d operand gets a dim added (then removed), batch dims broadcast.
Nd matmul_ref(Nd a, Nd b) {
  const bool a1 = a.dim() == 1, b1 = b.dim() == 1;
  if (a1) a.shape.insert(a.shape.begin(), 1);
  if (b1) b.shape.push_back(1);
  const int64_t n = a.size(-2), k = a.size(-1), m = b.size(-1);
  Shape ab(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  Shape batch(std::max(ab.size(), bb.size()), 1);
  for (size_t i = 0; i < batch.size(); ++i) {
    const int64_t sa = i < ab.size() ? ab[ab.size() - 1 - i] : 1, sb = i < bb.size() ? bb[bb.size() - 1 - i] : 1;
    batch[batch.size() - 1 - i] = std::max(sa, sb);
  }
  auto operand_index = [&](const Shape& ob, const Idx& i, int64_t r, int64_t c) {
    Idx idx;
    for (size_t d = 0; d < ob.size(); ++d) idx.push_back(ob[d] == 1 ? 0 : i[batch.size() - ob.size() + d]);
    idx.push_back(r), idx.push_back(c);
    return idx;
  };
  Shape s = batch;
  s.push_back(n), s.push_back(m);
  Nd r = build(s, [&](const Idx& i) {
    double acc = 0;
    for (int64_t x = 0; x < k; ++x)
      acc += a.at(operand_index(ab, i, i[i.size() - 2], x)) * b.at(operand_index(bb, i, x, i.back()));
    return acc;
  });
  if (b1) r.shape.pop_back();
  if (a1) r.shape.erase(r.shape.end() - (b1 ? 1 : 2));
  return r;
}

OpRow product(std::string name, std::vector<std::vector<Shape>> samples, std::function<Tensor(const In&)> op) {
  return {.name = std::move(name),
          .samples = std::move(samples),
          .op = [op](const In& x) { return Out{op(x)}; },
          .ref = [](const Refs& x) { return Refs{matmul_ref(x[0], x[1])}; },
          .atol = 1e-12,
          .rtol = 1e-10};
}

std::vector<OpRow> linalg_rows() {
  std::vector<OpRow> rows = {
      product("mm", {{{3, 4}, {4, 2}}, {{1, 3}, {3, 1}}}, [](const In& x) { return mm(x[0], x[1]); }),
      product("bmm", {{{2, 3, 4}, {2, 4, 5}}}, [](const In& x) { return bmm(x[0], x[1]); }),
      product("matmul",
              {{{4}, {4}}, {{3, 4}, {4}}, {{4}, {4, 3}}, {{3, 4}, {4, 2}}, {{2, 3, 4}, {4, 5}}, {{4}, {2, 4, 3}},
               {{2, 3, 4}, {4}}, {{2, 1, 3, 4}, {3, 4, 2}}, {{3, 4}, {2, 4, 2}}},
              [](const In& x) { return matmul(x[0], x[1]); }),
      product("dot", {{{5}, {5}}}, [](const In& x) { return dot(x[0], x[1]); }),
  };
  rows.push_back({.name = "outer",
                  .samples = {{{3}, {4}}},
                  .op = [](const In& x) { return Out{outer(x[0], x[1])}; },
                  .ref = [](const Refs& x) {
                    return Refs{build({3, 4}, [&](const Idx& i) { return x[0].v[i[0]] * x[1].v[i[1]]; })};
                  }});
  rows.push_back({.name = "addmm",
                  .samples = {{{3, 2}, {3, 4}, {4, 2}}, {{2}, {3, 4}, {4, 2}}, {{}, {3, 4}, {4, 2}}},
                  .op = [](const In& x) { return Out{addmm(x[0], x[1], x[2], 0.5, -2)}; },
                  .ref = [](const Refs& x) {
                    Nd ab = matmul_ref(x[1], x[2]);
                    return Refs{map2(x[0], ab, [](double in, double p) { return 0.5 * in - 2 * p; })};
                  }});
  rows.push_back({.name = "einsum_grouped_linear",
                  .samples = {{{2, 3, 4}, {3, 4, 5}}},
                  .op = [](const In& x) { return Out{einsum("bgi,gio->bgo", {x[0], x[1]})}; },
                  .ref = [](const Refs& x) {
                    return Refs{build({2, 3, 5}, [&](const Idx& i) {
                      double acc = 0;
                      for (int64_t k = 0; k < 4; ++k) acc += x[0].at({i[0], i[1], k}) * x[1].at({i[1], k, i[2]});
                      return acc;
                    })};
                  }});
  rows.push_back({.name = "einsum_batched_mm",
                  .samples = {{{2, 3, 4}, {2, 4, 5}}},
                  .op = [](const In& x) { return Out{einsum("gik,gkj->gij", {x[0], x[1]})}; },
                  .ref = [](const Refs& x) {
                    return Refs{build({2, 3, 5}, [&](const Idx& i) {
                      double acc = 0;
                      for (int64_t k = 0; k < 4; ++k) acc += x[0].at({i[0], i[1], k}) * x[1].at({i[0], k, i[2]});
                      return acc;
                    })};
                  }});
  return rows;
}
COHORT_OP_ROWS("linalg", linalg_rows);

}  // namespace
}  // namespace cohort::testing
