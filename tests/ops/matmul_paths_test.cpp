// The float32 product's special paths in src/ops/dnnl/matmul.cpp against float64: the addend
// added in the product's pass (Note [Fused addend]: addmm, baddbmm, linear's bias) and the tall
// transposed product computed as its transpose (Note [Tall transposed products]).
#include <gtest/gtest.h>

#include <cohort/cohort.h>

namespace cohort {
namespace {

// The largest error of a float32 result against the float64 one, relative to the largest value.
double relative_error(const Tensor& got, const Tensor& want) {
  return ((got.to(kFloat64) - want).abs().max() / want.abs().max()).item<double>();
}

TEST(MatmulPaths, TallTransposedProductMatchesFloat64) {
  manual_seed(3);
  // c [1024, 256] = g^T x with k 2048: a weight gradient of a linear layer, 1.07 GFLOP.
  Tensor g = randn({2048, 1024}), x = randn({2048, 256});
  Tensor want = mm(g.to(kFloat64).t(), x.to(kFloat64));
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    EXPECT_LT(relative_error(mm(g.t(), x), want), 1e-5) << threads << " threads";
  }
  set_num_threads(1);
  // The same through linear's backward: the weight gradient arrives in the weight's layout.
  Tensor w = randn({1024, 256}).requires_grad_();
  linear(x, w).backward(g);
  EXPECT_TRUE(w.grad().is_contiguous());
  EXPECT_LT(relative_error(w.grad(), want), 1e-5);
}

TEST(MatmulPaths, FusedAddendMatchesFloat64) {
  manual_seed(4);
  Tensor a = randn({3, 40, 24}), b = randn({3, 24, 32}), mask = randn({40, 32}), bias = randn({32});
  auto f64 = [](const Tensor& t) { return t.to(kFloat64); };
  Tensor want = f64(mask) * 0.5 + bmm(f64(a), f64(b)) * 2;
  EXPECT_LT(relative_error(baddbmm(mask, a, b, 0.5, 2), want), 1e-6);
  Tensor want2 = f64(bias) - addmm(f64(bias), f64(a[0]), f64(b[0]), 0, 1) * 3;  // bias - 3 a b
  EXPECT_LT(relative_error(addmm(bias, a[0], b[0], 1, -3), want2), 1e-6);
  // linear on a 3-d input folds its leading dims into one addmm.
  Tensor x = randn({5, 7, 24}), w = randn({32, 24});
  Tensor want3 = matmul(f64(x), f64(w).t()) + f64(bias);
  Tensor y = linear(x, w, bias);
  EXPECT_EQ(y.sizes(), IntArrayRef({5, 7, 32}));
  EXPECT_LT(relative_error(y, want3), 1e-6);
}

}  // namespace
}  // namespace cohort
