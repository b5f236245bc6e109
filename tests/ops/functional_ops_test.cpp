// The ATen-style free functions that are compositions or variants of other ops: huber_loss,
// dropout_, embedding's scale_grad_by_freq and sparse, one_hot, the positional cross_entropy_loss.
// Their values against libtorch itself are checked by tests/compat/functional.cpp.
#include <gtest/gtest.h>

#include <cohort/cohort.h>

#include "support/gradcheck.h"

namespace cohort {
namespace {

using testing::gradcheck;
using testing::gradgradcheck;

TensorOptions f64() { return TensorOptions(kFloat64); }

std::string message_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "<no exception>";
}

TEST(HuberLoss, IsDeltaTimesSmoothL1WithBetaDelta) {
  manual_seed(3);
  Tensor x = randn({5, 4}, f64()) * 3, y = randn({5, 4}, f64());
  for (double delta : {0.5, 1.0, 2.5})
    for (Reduction r : {kMean, kSum, kNone})
      EXPECT_TRUE(allclose(huber_loss(x, y, r, delta), smooth_l1_loss(x, y, r, delta) * delta, 1e-12, 1e-12))
          << "delta " << delta;
}

TEST(HuberLoss, DifferentiatesTwice) {
  manual_seed(4);
  // Differences on both sides of delta, none within 1e-3 of it (the kink).
  Tensor x = tensor({-3.0, -0.4, 0.2, 1.1, 2.6, 0.9}, f64()), y = zeros({6}, f64());
  auto fn = [](const std::vector<Tensor>& a) { return std::vector<Tensor>{huber_loss(a[0], a[1], kSum, 1.5)}; };
  EXPECT_TRUE(gradcheck(fn, {x, y}));
  EXPECT_TRUE(gradgradcheck(fn, {x, y}));
}

TEST(HuberLoss, ErrorsNameTheOp) {
  Tensor x = zeros({3});
  EXPECT_NE(message_of([&] { huber_loss(x, x, kMean, 0.0); }).find("huber_loss: delta must be positive, got 0"),
            std::string::npos);
  EXPECT_NE(message_of([&] { huber_loss(x, zeros({3, 1})); }).find("huber_loss: input of shape [3] and target of "
                                                                    "shape [3, 1] differ"),
            std::string::npos);
}

TEST(DropoutInPlace, WritesTheMaskedScaledValuesIntoItsArgument) {
  manual_seed(5);
  Tensor x = ones({1000});
  Tensor& out = dropout_(x, 0.5, /*train=*/true);
  EXPECT_TRUE(out.is_same(x));
  const int64_t zeros_count = (x == 0).sum().item<int64_t>(), kept = (x == 2).sum().item<int64_t>();
  EXPECT_EQ(zeros_count + kept, 1000);
  EXPECT_GT(zeros_count, 400);
  EXPECT_LT(zeros_count, 600);
  // The same generator state gives the same mask out of place.
  manual_seed(5);
  EXPECT_TRUE(equal(dropout(ones({1000}), 0.5, true), x));
}

TEST(DropoutInPlace, RefusesABadProbabilityAndIntegerInputs) {
  Tensor x = ones({3});
  EXPECT_NE(message_of([&] { dropout_(x, 1.5, true); }).find("dropout_: probability has to be between 0 and 1, but "
                                                             "got 1.5"),
            std::string::npos);
  Tensor i = ones({3}, TensorOptions(kInt64));
  EXPECT_NE(message_of([&] { dropout(i, 0.5, true); }).find("dropout: expected a floating-point input, got int64"),
            std::string::npos);
  EXPECT_TRUE(dropout(i, 0.5, false).is_same(i));  // evaluation never looks at the values
}

TEST(EmbeddingScaleGradByFreq, DividesEachRowsGradientByItsCount) {
  Tensor w = randn({4, 3}, f64().requires_grad(true));
  Tensor idx = tensor({1, 3, 1, 1, 0}, TensorOptions(kInt64));
  Tensor g = randn({5, 3}, f64());
  (embedding(w, idx, -1, /*scale_grad_by_freq=*/true) * g).sum().backward();
  Tensor expected = zeros({4, 3}, f64());
  expected[1] = (g[0] + g[2] + g[3]) / 3;
  expected[3] = g[1];
  expected[0] = g[4];
  EXPECT_TRUE(allclose(w.grad(), expected, 1e-12, 1e-12));
}

TEST(EmbeddingScaleGradByFreq, PaddingIdxStillGetsNoGradient) {
  Tensor w = zeros({3, 2}, f64().requires_grad(true));
  embedding(w, tensor({2, 2, 1}, TensorOptions(kInt64)), /*padding_idx=*/1, true).sum().backward();
  EXPECT_TRUE(equal(w.grad(), tensor({{0.0, 0.0}, {0.0, 0.0}, {1.0, 1.0}}, f64())));
}

TEST(EmbeddingSparse, IsRefusedWithTheFix) {
  Tensor w = zeros({3, 2});
  EXPECT_NE(message_of([&] { embedding(w, tensor({0}, TensorOptions(kInt64)), -1, false, true); })
                .find("embedding: sparse=true asks for a sparse gradient, and cohort has no sparse tensors; hint: "
                      "pass sparse=false"),
            std::string::npos);
}

TEST(OneHot, MarksEachIndexAlongANewLastDim) {
  Tensor t = tensor({{0, 2}, {1, 1}}, TensorOptions(kInt64));
  Tensor oh = one_hot(t, 4);
  EXPECT_EQ(oh.dtype(), kInt64);
  EXPECT_EQ(oh.sizes(), (Shape{2, 2, 4}));
  EXPECT_TRUE(equal(oh, tensor({{{1, 0, 0, 0}, {0, 0, 1, 0}}, {{0, 1, 0, 0}, {0, 1, 0, 0}}}, TensorOptions(kInt64))));
  EXPECT_EQ(one_hot(t).sizes(), (Shape{2, 2, 3}));  // the largest index + 1
  EXPECT_EQ(one_hot(zeros({0}, TensorOptions(kInt64)), 5).sizes(), (Shape{0, 5}));
}

TEST(OneHot, ErrorsNameTheOpAndTheValue) {
  EXPECT_NE(message_of([] { one_hot(tensor({0, -1}, TensorOptions(kInt64)), 3); })
                .find("one_hot: class indices must be non-negative, got -1"),
            std::string::npos);
  EXPECT_NE(message_of([] { one_hot(tensor({0, 3}, TensorOptions(kInt64)), 3); })
                .find("one_hot: class index 3 is out of range for num_classes=3"),
            std::string::npos);
  EXPECT_NE(message_of([] { one_hot(tensor({0.0})); }).find("one_hot: expected int64 class indices, got float32"),
            std::string::npos);
  EXPECT_NE(message_of([] { one_hot(zeros({0}, TensorOptions(kInt64))); })
                .find("one_hot: cannot infer num_classes from an empty tensor"),
            std::string::npos);
}

TEST(CrossEntropyLoss, PositionalArgumentsMatchTheOptionsForm) {
  manual_seed(6);
  Tensor x = randn({4, 3}, f64()), w = tensor({1.0, 0.5, 2.0}, f64());
  Tensor t = tensor({2, 0, 1, 0}, TensorOptions(kInt64));
  namespace F = nn::functional;
  Tensor via_options = F::cross_entropy(
      x, t, F::CrossEntropyOptions().weight(w).reduction(kSum).ignore_index(1).label_smoothing(0.1));
  EXPECT_TRUE(allclose(cross_entropy_loss(x, t, w, kSum, 1, 0.1), via_options, 1e-12, 1e-12));
}

}  // namespace
}  // namespace cohort
