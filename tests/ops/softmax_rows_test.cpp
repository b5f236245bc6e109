// The vectorised float32 softmax along the last dim (Note [Softmax rows] in src/ops/cpu/softmax.cpp):
// against float64 on rows of every length around the vector width and past the flush interval,
// on inputs that reach exp's underflow, with NaN and infinities, and independent of the thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <cohort/cohort.h>

namespace cohort {
namespace {

// The largest error of float32's softmax against float64's in units of its bound: x - max is
// rounded to float32 (a relative error of |x - max| 2^-24 in exp), then exp and the normalisation
// add a few ulp; values in float32's subnormals (below 1.2e-38) are rounded to its smallest step
// (1.4e-45), twice (exp, then the normalisation).
double worst_error(const Tensor& x, const Tensor& got, const Tensor& want) {
  Tensor x64 = x.to(kFloat64), w = want.to(kFloat64), d = (got.to(kFloat64) - w).abs();
  Tensor shift = (x64 - std::get<0>(x64.max(-1, true))).abs();
  Tensor bound = w * (shift + 16) * std::ldexp(1.0, -24) + 2 * std::ldexp(1.0, -149);
  return (d / bound).max().item<double>();
}

double testing_max_abs(const Tensor& a, const Tensor& b) {
  return (a.to(kFloat64) - b.to(kFloat64)).abs().max().item<double>();
}

TEST(SoftmaxRows, Float32MatchesFloat64) {
  manual_seed(11);
  for (int64_t n : {1, 7, 15, 16, 17, 31, 64, 100, 5000}) {
    SCOPED_TRACE(::testing::Message() << "row length " << n);
    // Spread 30: exp(x - max) reaches about e^-100, below float32's normal range.
    Tensor x = randn({9, n}) * 30;
    Tensor x64 = x.to(kFloat64);
    Tensor p = softmax(x, -1), p64 = softmax(x64, -1);
    EXPECT_LE(worst_error(x, p, p64), 1.0);
    // log_softmax: x - max - log(sum), each rounded once to float32 at most.
    EXPECT_LE(testing_max_abs(log_softmax(x, -1), log_softmax(x64, -1)), 1e-5 * (1 + x.abs().max().item<double>()));
  }
}

TEST(SoftmaxRows, SpecialValuesFollowMath) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // Rows: a NaN among values, all -inf, one +inf, -inf among values; 20 wide, so through a vector and the tail.
  Tensor x = zeros({4, 20});
  x.index_put_({0, 3}, nan);
  x.index_put_({1}, -inf);
  x.index_put_({2, 18}, inf);
  x.index_put_({3, 0}, -inf);
  Tensor p = softmax(x, -1), p64 = softmax(x.to(kFloat64), -1);
  for (int64_t r = 0; r < 4; ++r)
    for (int64_t j = 0; j < 20; ++j) {
      const double got = p.index({r, j}).item<double>(), want = p64.index({r, j}).item<double>();
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(got)) << "row " << r << " col " << j;
      else
        EXPECT_NEAR(got, want, 1e-7) << "row " << r << " col " << j;
    }
}

// A causal mask's -inf (half of each row) gives exact zeros; the rest matches float64.
TEST(SoftmaxRows, CausalMask) {
  manual_seed(13);
  Tensor x = randn({64, 64}) * 3 + nn::generate_square_subsequent_mask(64);
  Tensor p = softmax(x, -1), p64 = softmax(x.to(kFloat64), -1);
  EXPECT_LE((p.to(kFloat64) - p64).abs().max().item<double>(), 1e-7);
  EXPECT_TRUE(equal(p.masked_fill(x > -1e30, 0.0), zeros({64, 64})));
}

TEST(SoftmaxRows, ResultsDoNotDependOnTheThreadCount) {
  const int previous = get_num_threads();
  manual_seed(12);
  Tensor x = randn({4096, 64}) * 4;
  set_num_threads(1);
  Tensor a = softmax(x, -1), la = log_softmax(x, -1);
  set_num_threads(2);
  Tensor b = softmax(x, -1), lb = log_softmax(x, -1);
  set_num_threads(previous);
  EXPECT_TRUE(equal(a, b));
  EXPECT_TRUE(equal(la, lb));
}

}  // namespace
}  // namespace cohort
