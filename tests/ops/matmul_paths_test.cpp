// The float32 product's special paths in src/ops/dnnl/matmul.cpp against float64: the addend
// added in the product's pass (Note [Fused addend]: addmm, baddbmm, linear's bias; Note [Bias in the
// product]), the tall transposed product computed as its transpose (Note [Tall transposed
// products]), and bmm's and baddbmm's gradients written in their operands' layouts (Note [Gradient
// layout of a batched operand] in src/ops/linalg.cpp).
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include <cohort/cohort.h>

#include "support/gradcheck.h"

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
  // A row bias is added by the product's kernel (Note [Bias in the product]): also a slice of a
  // larger buffer (an offset, as MultiheadAttention's chunks of in_proj_bias), and a strided one
  // (copied into the output instead), with the same values as the composition.
  Tensor packed = randn({96}), strided = randn({64}).slice(0, 0, 64, 2);
  for (const Tensor& bias2 : {packed.slice(0, 32, 64), strided}) {
    Tensor want4 = mm(f64(a[1]), f64(b[1])) + f64(bias2);
    EXPECT_LT(relative_error(addmm(bias2, a[1], b[1]), want4), 1e-6);
    EXPECT_LT(relative_error(linear(a[1], b[1].t().contiguous(), bias2), want4), 1e-6);
  }
  // Its gradients: the bias's is the column sum of g.
  Tensor wl = randn({32, 24}).requires_grad_(), bl = randn({32}).requires_grad_(), xl = randn({40, 24}).requires_grad_();
  Tensor gl = randn({40, 32});
  linear(xl, wl, bl).backward(gl);
  EXPECT_LT(relative_error(bl.grad(), f64(gl).sum(0)), 1e-6);
  EXPECT_LT(relative_error(wl.grad(), mm(f64(gl).t(), f64(xl))), 1e-6);
  EXPECT_LT(relative_error(xl.grad(), mm(f64(gl), f64(wl))), 1e-6);
}

// Multi-head attention's operands: heads split off a projection [len, N, E] as [N*H, len, hd] views
// (batch stride hd, row stride N*E), the keys read through a transpose (a column-major view).
TEST(MatmulPaths, BatchedGradientsKeepTheOperandsLayout) {
  manual_seed(5);
  const int64_t L = 6, N = 3, H = 2, hd = 4, E = H * hd;
  auto heads = [&](const Tensor& p) { return p.reshape({L, N * H, hd}).transpose(0, 1); };
  auto f64 = [](const Tensor& t) { return t.to(kFloat64); };
  Tensor pq = randn({L, N, E}).requires_grad_(), pk = randn({L, N, E}).requires_grad_();
  Tensor pv = randn({L, N, E}).requires_grad_(), mask = randn({1, L, L});
  Tensor w = randn({N * H, L, hd});  // weights the output: a non-uniform gradient
  auto run = [&](const Tensor& q, const Tensor& k, const Tensor& v) {
    Tensor s = baddbmm(mask, heads(q), heads(k).transpose(1, 2), 1, 0.5);
    return (bmm(s, heads(v)) * w).sum();
  };
  // The gradients the float64 composition gives.
  Tensor q64 = f64(pq.detach()).requires_grad_(), k64 = f64(pk.detach()).requires_grad_();
  Tensor v64 = f64(pv.detach()).requires_grad_();
  {
    Tensor s = bmm(heads(q64) * 0.5, heads(k64).transpose(1, 2)) + f64(mask);
    (bmm(s, heads(v64)) * f64(w)).sum().backward();
  }
  run(pq, pk, pv).backward();
  for (auto [got, want] : {std::pair{pq, q64}, std::pair{pk, k64}, std::pair{pv, v64}}) {
    EXPECT_TRUE(got.grad().is_contiguous());
    EXPECT_LT(relative_error(got.grad(), want.grad()), 1e-5);
  }
  // Each operand's gradient itself, in the operand's layout: the heads view and its transpose.
  // (Hooks see them as computed; .grad of a non-contiguous leaf would be a contiguous copy.)
  Tensor pa = randn({L, N, E}).requires_grad_(), pb = randn({L, N, E}).requires_grad_();
  Tensor a = heads(pa), b = heads(pb).transpose(1, 2), ga, gb;
  a.register_hook([&](const Tensor& t) { ga = t; });
  b.register_hook([&](const Tensor& t) { gb = t; });
  Tensor g = randn({N * H, L, L});
  baddbmm(mask, a, b, 1, 0.5).backward(g);
  ASSERT_TRUE(ga.defined() && gb.defined());
  EXPECT_EQ(ga.strides(), a.strides());
  EXPECT_EQ(gb.strides(), b.strides());
  EXPECT_LT(relative_error(ga, bmm(f64(g), f64(b).transpose(1, 2)) * 0.5), 1e-6);
  EXPECT_LT(relative_error(gb, bmm(f64(a).transpose(1, 2), f64(g)) * 0.5), 1e-6);
  // An expanded operand (batch stride 0) gets a contiguous gradient of its expanded sizes.
  Tensor c = randn({1, L, hd}).requires_grad_(), d = randn({N * H, hd, L});
  bmm(c.expand({N * H, L, hd}), d).backward(g);
  EXPECT_LT(relative_error(c.grad(), bmm(f64(g), f64(d).transpose(1, 2)).sum(0, true)), 1e-5);
  // Under create_graph the gradients are differentiable (the ops' composition).
  Tensor x = randn({2, 3, 4}, TensorOptions(kFloat64)).requires_grad_();
  Tensor y = randn({2, 5, 4}, TensorOptions(kFloat64)).transpose(1, 2).requires_grad_();
  auto f = [](const std::vector<Tensor>& in) {
    return std::vector<Tensor>{baddbmm(zeros({1, 3, 5}, TensorOptions(kFloat64)), in[0], in[1], 1, 0.5),
                               bmm(in[0], in[1])};
  };
  EXPECT_TRUE(testing::gradcheck(f, {x, y}));
  EXPECT_TRUE(testing::gradgradcheck(f, {x, y}));
}

}  // namespace
}  // namespace cohort
