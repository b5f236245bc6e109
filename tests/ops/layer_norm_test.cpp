// layer_norm's fused kernels (src/ops/cpu/layer_norm.cpp): PyTorch's values (tests/fixtures/pool_norm.json,
// "layer_norm"), a composed float64 reference on rows long and short, gradcheck and gradgradcheck
// (the create_graph backward is composed), results independent of the thread count, and bfloat16/
// float16 computed in float32. The op table's row (tests/ops/op_table_nn_test.cpp) adds strided inputs.
#include <gtest/gtest.h>

#include "support/gradcheck.h"
#include "support/pytorch_fixture.h"

#include <nlohmann/json.hpp>

#include <cohort/cohort.h>

namespace cohort {
namespace {

using json = nlohmann::json;
using In = std::vector<Tensor>;

// The same normalisation composed of ops, in float64: the reference.
Tensor composed(const Tensor& x, IntArrayRef shape, const Tensor& w, const Tensor& b, double eps) {
  std::vector<int64_t> dims;
  for (int64_t d = x.dim() - static_cast<int64_t>(shape.size()); d < x.dim(); ++d) dims.push_back(d);
  Tensor xd = x.to(kFloat64);
  Tensor y = (xd - xd.mean(dims, true)) * rsqrt(xd.var(dims, /*unbiased=*/false, true) + eps);
  if (w.defined()) y = y * w.to(kFloat64);
  if (b.defined()) y = y + b.to(kFloat64);
  return y;
}

// Output and the gradients of sum(output * up) w.r.t. x, w, b (those defined).
std::vector<Tensor> run(const Tensor& x, IntArrayRef shape, const Tensor& w, const Tensor& b, double eps,
                        const Tensor& up, bool create_graph = false) {
  In wrt{x};
  for (const Tensor& t : {w, b})
    if (t.defined()) wrt.push_back(t);
  Tensor y = layer_norm(x, shape, w, b, eps);
  std::vector<Tensor> out{y.detach()};
  for (const Tensor& g : autograd::grad({(y * up).sum()}, wrt, {}, std::nullopt, create_graph)) out.push_back(g.detach());
  return out;
}

Tensor leaf(const Tensor& t) { return t.defined() ? t.detach().requires_grad_() : t; }

TEST(LayerNormFixture, MatchesPyTorch) {
  const json& fixture = testing::load_fixture("pool_norm.json");
  int checked = 0;
  for (const json& c : fixture.at("layer_norm")) {
    const std::string name = c.at("name");
    SCOPED_TRACE(name);
    const auto shape = c.at("normalized_shape").get<std::vector<int64_t>>();
    const double eps = c.at("eps");
    for (DType t : {kFloat64, kFloat32}) {
      const double tol = t == kFloat64 ? 1e-10 : 2e-4;
      auto decode = [&](const char* key) { return c.at(key).is_null() ? Tensor() : testing::decode_tensor(c.at(key)).to(t); };
      Tensor x = leaf(decode("input")), w = leaf(decode("weight")), b = leaf(decode("bias"));
      auto r = run(x, shape, w, b, eps, decode("upstream"));
      const std::string in = t == kFloat64 ? " (float64)" : " (float32)";
      EXPECT_TRUE(testing::matches_pytorch(name + " output" + in, r[0], c.at("output"), tol));
      EXPECT_TRUE(testing::matches_pytorch(name + " grad input" + in, r[1], c.at("grad_input"), tol));
      size_t k = 2;
      if (w.defined()) EXPECT_TRUE(testing::matches_pytorch(name + " grad weight" + in, r[k++], c.at("grad_weight"), tol));
      if (b.defined()) EXPECT_TRUE(testing::matches_pytorch(name + " grad bias" + in, r[k++], c.at("grad_bias"), tol));
    }
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

// Against the composed reference, rows of every remainder and longer than the lanes' flush interval,
// float64 (to rounding) and float32 (to float32's error on sums of up to 4500 terms).
TEST(LayerNormReference, FusedMatchesComposed) {
  manual_seed(3);
  struct Case {
    Shape x, shape;
    bool w, b;
  };
  for (const Case& c : {Case{{64, 32, 512}, {512}, true, true}, Case{{3, 4500}, {4500}, true, false},
                        Case{{5, 17}, {17}, false, true}, Case{{7, 3, 11}, {3, 11}, true, true},
                        Case{{300, 130}, {130}, false, false}}) {
    SCOPED_TRACE(::testing::Message() << "x " << IntArrayRef(c.x) << " normalized_shape " << IntArrayRef(c.shape));
    for (DType t : {kFloat64, kFloat32}) {
      const TensorOptions o(t);
      Tensor x = leaf(randn(c.x, o) * 3 + 1), w = c.w ? leaf(randn(c.shape, o)) : Tensor(),
             b = c.b ? leaf(randn(c.shape, o)) : Tensor(), up = randn(c.x, o);
      auto got = run(x, c.shape, w, b, 1e-5, up);
      Tensor x64 = leaf(x.to(kFloat64)), w64 = leaf(c.w ? w.to(kFloat64) : Tensor()),
             b64 = leaf(c.b ? b.to(kFloat64) : Tensor());
      In wrt{x64};
      for (const Tensor& p : {w64, b64})
        if (p.defined()) wrt.push_back(p);
      Tensor y = composed(x64, c.shape, w64, b64, 1e-5);
      std::vector<Tensor> want{y.detach()};
      for (const Tensor& g : autograd::grad({(y * up.to(kFloat64)).sum()}, wrt)) want.push_back(g);
      ASSERT_EQ(got.size(), want.size());
      const double tol = t == kFloat64 ? 1e-11 : 1e-4;
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].dtype(), t);
        const double scale = 1 + want[i].abs().max().item<double>();
        EXPECT_LE(testing::max_abs_diff(got[i], want[i]), tol * scale) << "result " << i << " in " << t;
      }
    }
  }
}

TEST(LayerNormGrad, GradcheckAndGradgradcheck) {
  manual_seed(5);
  const TensorOptions o(kFloat64);
  struct Case {
    Shape x, shape;
    bool w, b;
  };
  for (const Case& c : {Case{{3, 5}, {5}, true, true}, Case{{2, 3, 4}, {3, 4}, true, false},
                        Case{{4, 3}, {3}, false, true}, Case{{2, 2, 3}, {2, 3}, false, false},
                        Case{{6}, {6}, true, true}}) {
    SCOPED_TRACE(::testing::Message() << "x " << IntArrayRef(c.x) << " normalized_shape " << IntArrayRef(c.shape));
    In args{randn(c.x, o)};
    if (c.w) args.push_back(randn(c.shape, o));
    if (c.b) args.push_back(randn(c.shape, o));
    auto fn = [&](const In& a) {
      const Tensor w = c.w ? a[1] : Tensor(), b = c.b ? a[c.w ? 2 : 1] : Tensor();
      return In{layer_norm(a[0], c.shape, w, b, 1e-3)};
    };
    EXPECT_TRUE(testing::gradcheck(fn, args, 1e-6, 1e-5, 1e-3, "layer_norm"));
    EXPECT_TRUE(testing::gradcheck_noncontiguous(fn, args, 1e-6, 1e-5, 1e-3, "layer_norm"));
    EXPECT_TRUE(testing::gradgradcheck(fn, args, 1e-6, 1e-5, 1e-3, "layer_norm"));
  }
}

// The create_graph backward (composed ops) and the fused one give the same first derivatives.
TEST(LayerNormGrad, CreateGraphMatchesFused) {
  manual_seed(6);
  const TensorOptions o(kFloat64);
  Tensor x = leaf(randn({4, 6, 10}, o)), w = leaf(randn({6, 10}, o)), b = leaf(randn({6, 10}, o));
  Tensor up = randn({4, 6, 10}, o);
  auto fused = run(x, {6, 10}, w, b, 1e-5, up), graphed = run(x, {6, 10}, w, b, 1e-5, up, /*create_graph=*/true);
  for (size_t i = 0; i < fused.size(); ++i) EXPECT_LE(testing::max_abs_diff(fused[i], graphed[i]), 1e-12) << i;
}

// Only the parameters require grad (a frozen input): the kernel skips dx and still sums the columns;
// only the input does: no column sums.
TEST(LayerNormGrad, SomeInputsWithoutGrad) {
  manual_seed(7);
  const TensorOptions o(kFloat64);
  Tensor x = randn({40, 24}, o), w = leaf(randn({24}, o)), b = leaf(randn({24}, o)), up = randn({40, 24}, o);
  auto g = autograd::grad({(layer_norm(x, {24}, w, b, 1e-5) * up).sum()}, {w, b});
  Tensor w2 = leaf(w), b2 = leaf(b);
  auto want = autograd::grad({(composed(x, {24}, w2, b2, 1e-5) * up).sum()}, {w2, b2});
  EXPECT_LE(testing::max_abs_diff(g[0], want[0]), 1e-11);
  EXPECT_LE(testing::max_abs_diff(g[1], want[1]), 1e-11);
  Tensor xg = leaf(x);
  auto gx = autograd::grad({(layer_norm(xg, {24}, w.detach(), b.detach(), 1e-5) * up).sum()}, {xg});
  Tensor xg2 = leaf(x);
  auto want_x = autograd::grad({(composed(xg2, {24}, w.detach(), b.detach(), 1e-5) * up).sum()}, {xg2});
  EXPECT_LE(testing::max_abs_diff(gx[0], want_x[0]), 1e-11);
}

// Rows are independent and the column sums add fixed blocks in a fixed order: bit-identical
// results with 1, 2 and 3 threads.
TEST(LayerNormThreads, ResultsDoNotDependOnTheThreadCount) {
  const int previous = get_num_threads();
  manual_seed(8);
  for (Shape xs : {Shape{64, 32, 512}, Shape{300, 130}, Shape{5, 70000}}) {
    SCOPED_TRACE(::testing::Message() << "x " << IntArrayRef(xs));
    const Shape shape{xs.back()};
    Tensor x = leaf(randn(xs)), w = leaf(randn(shape)), b = leaf(randn(shape)), up = randn(xs);
    std::vector<std::vector<Tensor>> results;
    for (int threads : {1, 2, 3}) {
      set_num_threads(threads);
      results.push_back(run(x, shape, w, b, 1e-5, up));
    }
    for (size_t r = 1; r < results.size(); ++r)
      for (size_t i = 0; i < results[0].size(); ++i)
        EXPECT_TRUE(equal(results[0][i], results[r][i])) << "result " << i << " with " << r + 1 << " threads";
  }
  set_num_threads(previous);
}

// bfloat16 and float16 are computed in float32 and rounded once: exactly float32's results rounded.
TEST(LayerNormReduced, ComputedInFloat32) {
  manual_seed(9);
  for (DType t : {kBFloat16, kFloat16}) {
    SCOPED_TRACE(::testing::Message() << t);
    const TensorOptions o(t);
    Tensor x = leaf(randn({6, 40}, o)), w = leaf(randn({40}, o)), b = leaf(randn({40}, o)), up = randn({6, 40}, o);
    auto narrow = run(x, {40}, w, b, 1e-5, up);
    auto wide = run(leaf(x.to(kFloat32)), {40}, leaf(w.to(kFloat32)), leaf(b.to(kFloat32)), 1e-5, up.to(kFloat32));
    for (size_t i = 0; i < narrow.size(); ++i) {
      EXPECT_EQ(narrow[i].dtype(), t);
      // The float32 run's gradient of x reads up * w in float32; so does the narrow one (widened).
      EXPECT_TRUE(equal(narrow[i], wide[i].to(t))) << "result " << i;
    }
  }
}

TEST(LayerNormErrors, NameTheShapes) {
  try {
    layer_norm(randn({2, 3}), {3}, randn({4}));
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("layer_norm: expected weight of shape [3], got weight of shape [4]"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace cohort
