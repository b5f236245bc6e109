// Channel-wise dropout: cohort::feature_dropout's mask statistics (whole channels, per sample), its
// scale, p = 0 / 1 and eval, gradients, errors; the Dropout1d/2d/3d layers (unbatched input, inplace,
// printing, manual_seed repeats the mask).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "cohort/nn/dropout_nd.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/feature_dropout.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "support/error_of.h"
#include "support/gradcheck.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;
using testing::error_of;

std::string repr(const nn::Module& m) {
  std::ostringstream os;
  m.pretty_print(os);
  return os.str();
}

// Each (n, c) slice of y must be x's slice times 0 or times scale, whole; returns the kept fraction.
double check_whole_channels(const Tensor& x, const Tensor& y, double scale) {
  const int64_t N = x.size(0), C = x.size(1);
  Tensor xs = x.reshape({N, C, -1}).to(kFloat64), ys = y.reshape({N, C, -1}).to(kFloat64);
  int64_t kept = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      Tensor a = xs.select(0, n).select(0, c), b = ys.select(0, n).select(0, c);
      const bool zero = b.abs().max().item<double>() == 0;
      const bool scaled = (b - a * scale).abs().max().item<double>() < 1e-5 * (1 + a.abs().max().item<double>());
      EXPECT_TRUE(zero || scaled) << "channel (" << n << ", " << c << ") is neither dropped whole nor kept whole";
      kept += zero ? 0 : 1;
    }
  return static_cast<double>(kept) / static_cast<double>(N * C);
}

TEST(FeatureDropout, ZeroesWholeChannelsAtRateP) {
  manual_seed(11);
  Tensor x = rand({64, 32, 3, 4}) + 0.5;  // no zero elements of its own
  for (double p : {0.2, 0.5, 0.8}) {
    Tensor y = feature_dropout(x, p, true);
    ASSERT_EQ(y.sizes(), x.sizes());
    const double kept = check_whole_channels(x, y, 1 / (1 - p));
    // 2048 channels: the kept fraction is within 4 standard deviations of 1 - p.
    EXPECT_NEAR(kept, 1 - p, 4 * std::sqrt(p * (1 - p) / 2048)) << "p=" << p;
  }
  // Each channel index is dropped independently across samples (a mask per (n, c), not per c).
  Tensor y = feature_dropout(x, 0.5, true);
  Tensor dropped = (y.reshape({64, 32, -1}).abs().amax({2}) == 0).to(kFloat64);  // [N, C]
  Tensor per_channel = dropped.mean({0});
  EXPECT_GT(per_channel.min().item<double>(), 0.1);
  EXPECT_LT(per_channel.max().item<double>(), 0.9);
  // Any rank >= 2: [N, C] drops single elements, [N, C, L] rows.
  check_whole_channels(x.reshape({64, 32, 12}), feature_dropout(x.reshape({64, 32, 12}), 0.3, true), 1 / 0.7);
  Tensor x2 = rand({16, 8}) + 0.5;
  check_whole_channels(x2, feature_dropout(x2, 0.3, true), 1 / 0.7);
}

TEST(FeatureDropout, EvalAndPZeroAreIdentityPOneZeroes) {
  Tensor x = randn({4, 3, 5});
  EXPECT_TRUE(feature_dropout(x, 0.5, false).is_same(x));
  EXPECT_TRUE(feature_dropout(x, 0.0, true).is_same(x));
  Tensor zero = feature_dropout(x, 1.0, true);
  EXPECT_TRUE(zero.equal(zeros_like(x)));
  Tensor nan = full({2, 2, 2}, NAN);
  EXPECT_EQ(isnan(feature_dropout(nan, 1.0, true)).sum().item<int64_t>(), 8);  // x * 0, as ATen
}

TEST(FeatureDropout, SeedRepeatsTheMaskAndGeneratorIsUsed) {
  Tensor x = randn({8, 6, 3});
  manual_seed(3);
  Tensor a = feature_dropout(x, 0.5, true);
  manual_seed(3);
  EXPECT_TRUE(feature_dropout(x, 0.5, true).equal(a));
  Generator g1(9), g2(9);
  EXPECT_TRUE(feature_dropout(x, 0.5, true, &g1).equal(feature_dropout(x, 0.5, true, &g2)));
}

TEST(FeatureDropout, InPlaceAndGradients) {
  manual_seed(4);
  Tensor x = randn({3, 4, 2, 2}, kFloat64);
  Tensor y = x.clone();
  manual_seed(5);
  feature_dropout_(y, 0.4, true);
  manual_seed(5);
  EXPECT_TRUE(feature_dropout(x, 0.4, true).equal(y));
  // The gradient is the mask: the same draw each evaluation (a fresh generator per call).
  auto fn = [](const std::vector<Tensor>& in) {
    Generator g(21);
    return std::vector<Tensor>{feature_dropout(in[0], 0.4, true, &g)};
  };
  EXPECT_TRUE(testing::gradcheck(fn, {x}));
  EXPECT_TRUE(testing::gradgradcheck(fn, {x}));
  Tensor leaf = randn({2, 3, 4}, kFloat64).requires_grad_();
  Generator g(21);
  Tensor out = feature_dropout(leaf, 0.5, true, &g);
  out.sum().backward();
  check_whole_channels(ones_like(leaf), leaf.grad(), 2.0);
}

TEST(FeatureDropout, Errors) {
  EXPECT_THAT(error_of([] { feature_dropout(randn({5}), 0.5, true); }),
              HasSubstr("feature_dropout: expected an input of at least 2 dims [N, C, ...], got input of shape [5]"));
  EXPECT_THAT(error_of([] { feature_dropout(randn({2, 5}), 1.5, true); }),
              HasSubstr("feature_dropout: dropout probability has to be between 0 and 1, but got 1.5"));
  EXPECT_THROW(feature_dropout(ones({2, 3}, kInt64), 0.5, true), TypeError);
  EXPECT_THAT(error_of([] { nn::functional::dropout2d(randn({2, 5}), 0.5, true); }),
              HasSubstr("dropout2d: expected a 3-d (unbatched) or 4-d (batched) input [N, C, H, W], got input of "
                        "shape [2, 5]"));
  EXPECT_THAT(error_of([] { nn::Dropout2d(nn::Dropout2dOptions(-0.1)); }),
              HasSubstr("Dropout2d: probability has to be between 0 and 1, but got -0.1"));
}

TEST(DropoutNd, LayersTrainEvalUnbatchedInplaceAndPrint) {
  nn::Dropout2d drop(nn::Dropout2dOptions(0.5));
  EXPECT_EQ(repr(*drop), "Dropout2d(p=0.5, inplace=False)");
  EXPECT_EQ(repr(*nn::Dropout3d(nn::Dropout3dOptions(0.25).inplace(true))), "Dropout3d(p=0.25, inplace=True)");
  EXPECT_EQ(repr(*nn::Dropout1d()), "Dropout1d(p=0.5, inplace=False)");
  EXPECT_TRUE(drop->named_parameters().is_empty());

  manual_seed(6);
  Tensor x = rand({6, 8, 3, 3}) + 0.5;
  Tensor y = drop(x);
  const double kept = check_whole_channels(x, y, 2.0);
  EXPECT_GT(kept, 0.2);
  EXPECT_LT(kept, 0.8);
  // Unbatched [C, H, W]: channels of the one sample (libtorch's C++ reading of a 3-d input).
  Tensor u = rand({40, 2, 2}) + 0.5;
  Tensor v = drop(u);
  ASSERT_EQ(v.sizes(), u.sizes());
  check_whole_channels(u.unsqueeze(0), v.unsqueeze(0), 2.0);
  // The same draw as the batched form of that sample.
  manual_seed(8);
  Tensor v1 = drop(u);
  manual_seed(8);
  EXPECT_TRUE(drop(u.unsqueeze(0)).squeeze(0).equal(v1));

  drop->eval();
  EXPECT_TRUE(drop(x).equal(x));
  drop->train();

  nn::Dropout2d inplace(nn::Dropout2dOptions(0.5).inplace(true));
  Tensor z = x.clone();
  manual_seed(9);
  Tensor r = inplace(z);
  EXPECT_TRUE(r.is_same(z));
  manual_seed(9);
  EXPECT_TRUE(drop(x).equal(z));

  nn::Dropout1d d1(0.5);
  Tensor s = rand({10, 12, 7}) + 0.5;
  check_whole_channels(s, d1(s), 2.0);
  EXPECT_EQ(d1(rand({12, 7})).sizes(), IntArrayRef({12, 7}));
  nn::Dropout3d d3(0.5);
  Tensor t = rand({4, 6, 2, 3, 2}) + 0.5;
  check_whole_channels(t, d3(t), 2.0);
  EXPECT_EQ(d3(rand({6, 2, 3, 2})).sizes(), IntArrayRef({6, 2, 3, 2}));
}

}  // namespace
}  // namespace cohort
