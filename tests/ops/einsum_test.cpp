// einsum against a brute-force float64 loop over every letter assignment, its gradients against
// central finite differences, and its error messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "cohort/autograd/engine.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/core/error.h"
#include "cohort/core/generator.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/linalg.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"

namespace cohort {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Naive einsum: `eq` has letters only and an explicit "->"; a letter of size 1 in one operand
// broadcasts against the others. Loops over every assignment of all letters, in float64.
Tensor naive_einsum(const std::string& eq, const std::vector<Tensor>& xs) {
  const size_t arrow = eq.find("->");
  std::vector<std::string> terms(1);
  for (char c : eq.substr(0, arrow)) {
    if (c == ',') terms.emplace_back();
    else terms.back() += c;
  }
  const std::string out = eq.substr(arrow + 2);
  std::map<char, int64_t> size;
  std::vector<std::vector<double>> data;
  for (size_t i = 0; i < xs.size(); ++i) {
    Tensor x = xs[i].to(kFloat64).contiguous();
    data.emplace_back(x.data_ptr<double>(), x.data_ptr<double>() + x.numel());
    for (size_t d = 0; d < terms[i].size(); ++d) size[terms[i][d]] = std::max(size[terms[i][d]], x.size(d));
  }
  std::vector<char> letters;
  for (auto& [c, s] : size) letters.push_back(c);
  Shape out_sizes;
  int64_t out_numel = 1;
  for (char c : out) out_sizes.push_back(size[c]), out_numel *= size[c];
  std::vector<double> result(out_numel, 0.0);

  std::map<char, int64_t> idx;
  for (char c : letters) idx[c] = 0;
  for (;;) {
    double p = 1;
    for (size_t i = 0; i < xs.size(); ++i) {
      int64_t flat = 0;
      for (size_t d = 0; d < terms[i].size(); ++d) {
        const int64_t n = xs[i].size(d);
        flat = flat * n + (n == 1 ? 0 : idx[terms[i][d]]);
      }
      p *= data[i][flat];
    }
    int64_t flat = 0;
    for (char c : out) flat = flat * size[c] + idx[c];
    result[flat] += p;
    size_t k = 0;  // odometer over all letters
    for (; k < letters.size(); ++k) {
      if (++idx[letters[k]] < size[letters[k]]) break;
      idx[letters[k]] = 0;
    }
    if (k == letters.size()) break;
  }
  return tensor(ArrayRef<double>(result)).reshape(out_sizes);
}

void expect_close(const Tensor& got_in, const Tensor& want, double tol) {
  ASSERT_EQ(got_in.sizes(), want.sizes());
  Tensor got = got_in.to(kFloat64).contiguous();
  const double* g = got.data_ptr<double>();
  const double* w = want.data_ptr<double>();
  for (int64_t i = 0; i < want.numel(); ++i)
    ASSERT_NEAR(g[i], w[i], tol * (1 + std::abs(w[i]))) << "at flat element " << i << " of shape " << want.sizes();
}

struct Case {
  std::string equation;
  std::string reference;  // the same contraction, letters only and explicit, for naive_einsum
  std::vector<Shape> shapes;
};

const std::vector<Case> kCases = {
    {"ij,jk->ik", "ij,jk->ik", {{3, 4}, {4, 5}}},                                // matrix product
    {"bij,bjk->bik", "bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}},                    // batch matmul
    {"bij,bjk->bik", "bij,bjk->bik", {{1, 3, 4}, {2, 4, 5}}},                    // size-1 batch broadcasts
    {"i,j->ij", "i,j->ij", {{3}, {4}}},                                          // outer product
    {"i,i->", "i,i->", {{5}, {5}}},                                              // dot
    {"ij->ji", "ij->ji", {{3, 4}}},                                              // transpose
    {"ij->", "ij->", {{3, 4}}},                                                  // sum of all
    {"ij->j", "ij->j", {{3, 4}}},                                                // column sums
    {"bgi,gio->bgo", "bgi,gio->bgo", {{5, 3, 4}, {3, 4, 6}}},                    // grouped linear (examples/grouped_branches.cpp)
    {"gik,gkj->gij", "gik,gkj->gij", {{3, 2, 4}, {3, 4, 5}}},                    // batched matmul per group
    {"...ij,...jk->...ik", "xyij,yjk->xyik", {{2, 1, 3, 4}, {5, 4, 2}}},         // ellipsis, broadcast batch
    {"...ij->...ji", "abij->abji", {{2, 3, 4, 5}}},                              // ellipsis, one operand
    {"ij,jk", "ij,jk->ik", {{3, 4}, {4, 5}}},                                    // implicit output
    {"ji", "ji->ij", {{3, 4}}},                                                  // implicit is alphabetical
    {" i j , j k -> k i ", "ij,jk->ki", {{3, 4}, {4, 5}}},                       // spaces
    {"ijk,jl->li", "ijk,jl->li", {{2, 3, 4}, {3, 5}}},                           // k summed before the bmm
    {"ij,jk->ik", "ij,jk->ik", {{3, 1}, {4, 5}}},                                // size-1 contracted letter
};

std::vector<Tensor> random_inputs(const std::vector<Shape>& shapes, DType dtype) {
  std::vector<Tensor> xs;
  for (const Shape& s : shapes) xs.push_back(randn(s, dtype));
  return xs;
}

TEST(Einsum, MatchesNaiveReference) {
  manual_seed(0);
  for (const Case& c : kCases) {
    for (DType dtype : {kFloat64, kFloat32}) {
      SCOPED_TRACE("einsum(\"" + c.equation + "\") in " + (dtype == kFloat64 ? "float64" : "float32"));
      std::vector<Tensor> xs = random_inputs(c.shapes, dtype);
      Tensor got = einsum(c.equation, xs);
      EXPECT_EQ(got.dtype(), dtype);
      expect_close(got, naive_einsum(c.reference, xs), dtype == kFloat64 ? 1e-12 : 1e-5);
    }
  }
}

TEST(Einsum, StridedOperands) {
  manual_seed(1);
  Tensor a = randn({4, 3}, kFloat64).t();          // [3, 4], transposed strides
  Tensor b = randn({2, 5, 4}, kFloat64).select(0, 1).t();  // [4, 5], offset and transposed
  expect_close(einsum("ij,jk->ik", {a, b}), naive_einsum("ij,jk->ik", {a, b}), 1e-12);
  expect_close(einsum("ij,jk->ki", {a, b}), naive_einsum("ij,jk->ki", {a, b}), 1e-12);
}

// Gradients of sum(einsum(eq, xs) * w) for a fixed random w, against central differences.
void expect_grads_match_finite_differences(const std::string& eq, const std::vector<Shape>& shapes) {
  SCOPED_TRACE("gradient of einsum(\"" + eq + "\")");
  manual_seed(2);
  std::vector<Tensor> xs = random_inputs(shapes, kFloat64);
  for (Tensor& x : xs) x.requires_grad_();
  Tensor w = randn(einsum(eq, xs).sizes(), kFloat64);
  auto loss = [&] { return sum(mul(einsum(eq, xs), w)); };
  std::vector<Tensor> grads = autograd::grad({loss()}, xs);

  NoGradGuard no_grad;
  const double h = 1e-6;
  for (size_t i = 0; i < xs.size(); ++i) {
    ASSERT_EQ(grads[i].sizes(), xs[i].sizes());
    Tensor g = grads[i].contiguous();
    double* p = xs[i].data_ptr<double>();
    for (int64_t j = 0; j < xs[i].numel(); ++j) {
      const double saved = p[j];
      p[j] = saved + h;
      const double plus = loss().item<double>();
      p[j] = saved - h;
      const double minus = loss().item<double>();
      p[j] = saved;
      const double numeric = (plus - minus) / (2 * h);
      ASSERT_NEAR(g.data_ptr<double>()[j], numeric, 1e-6 * (1 + std::abs(numeric)))
          << "operand " << i << ", flat element " << j;
    }
  }
}

TEST(Einsum, GradientsMatchFiniteDifferences) {
  expect_grads_match_finite_differences("bgi,gio->bgo", {{3, 2, 4}, {2, 4, 3}});
  expect_grads_match_finite_differences("gik,gkj->gij", {{2, 3, 4}, {2, 4, 2}});
  expect_grads_match_finite_differences("...ij,...jk->...ik", {{2, 1, 3, 2}, {3, 2, 2}});
  expect_grads_match_finite_differences("ijk,jl->li", {{2, 3, 2}, {3, 2}});
}

struct ErrorCase {
  std::string equation;
  std::vector<Shape> shapes;
  std::string message;  // a substring of the expected message
};

const std::vector<ErrorCase> kErrorCases = {
    {"bn,anm,bm->ba", {{2, 3}, {4, 3, 5}, {2, 5}}, "supports one or two operands, got 3"},
    {"ij,jk->ik", {{2, 3}}, "has 2 operand(s), got 1 tensor(s)"},
    {"ij->i", {{2, 3, 4}}, "operand 0 has subscripts 'ij' for 2 dims, got shape [2, 3, 4]"},
    {"...ijk->i", {{2, 3}}, "for at least 3 dims, got shape [2, 3]"},
    {"ij,jk->ik", {{2, 3}, {4, 5}}, "letter 'j' has size 3 in operand 0 but size 4 in operand 1"},
    {"...i,...i->...i", {{2, 3}, {4, 3}}, "the dims under '...' do not broadcast"},
    {"ij->iz", {{2, 3}}, "output letter 'z' does not appear in any input"},
    {"ij->ii", {{2, 3}}, "output letter 'i' appears more than once"},
    {"ij,j#->i", {{2, 3}, {3, 3}}, "invalid character '#'"},
    {"ij-i", {{2, 3}}, "invalid character '-'"},
    {"i.j->ij", {{2, 3}}, "'.' may only appear as one '...' per operand"},
    {"ii->i", {{3, 3}}, "letter 'i' repeats in operand 0 ('ii'); diagonals are not supported"},
    {"ij->i->j", {{2, 3}}, "'->' may appear only once"},
};

TEST(Einsum, ErrorsSayWhatToFix) {
  for (const ErrorCase& c : kErrorCases) {
    SCOPED_TRACE("einsum(\"" + c.equation + "\")");
    std::string message = "no error";
    try {
      einsum(c.equation, random_inputs(c.shapes, kFloat32));
    } catch (const Error& e) {
      message = e.what();
    }
    EXPECT_THAT(message, AllOf(StartsWith("einsum: "), HasSubstr(c.message)));
  }
}

}  // namespace
}  // namespace cohort
