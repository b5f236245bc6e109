// batch_norm_stats: per-channel mean and biased variance in float64, on float32/float64 and strided
// inputs far from zero. batch_norm's values, strided inputs and gradients are in the op table
// (tests/ops/op_table_nn_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cohort/core/generator.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/normalization.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "support/error_of.h"
#include "support/gradcheck.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;
using testing::error_of;

double max_diff(const Tensor& a, const Tensor& b) {
  return (a.detach().to(kFloat64) - b.detach().to(kFloat64)).abs().max().item<double>();
}

TEST(BatchNormStats, MeanAndBiasedVarianceInFloat64) {
  manual_seed(22);
  for (const Shape& shape : {Shape{6, 3}, Shape{4, 3, 5}, Shape{2, 3, 7, 5}}) {
    for (DType dtype : {kFloat32, kFloat64}) {
      for (bool strided : {false, true}) {
        SCOPED_TRACE(::testing::Message() << IntArrayRef(shape) << " " << dtype << (strided ? " non-contiguous" : ""));
        // An offset of 1000 would make a one-pass sum of squares lose digits.
        Tensor x = randn(shape, dtype) + 1000;
        if (strided) x = testing::make_noncontiguous(x);
        std::vector<int64_t> dims{0};
        for (int64_t d = 2; d < x.dim(); ++d) dims.push_back(d);
        Tensor x64 = x.to(kFloat64);
        auto [mean, variance] = batch_norm_stats(x);
        EXPECT_EQ(mean.dtype(), kFloat64);
        EXPECT_EQ(mean.sizes(), Shape{3});
        // float32 inputs are summed in float lanes (Note [Batch norm fast path]): ~1e-7 relative.
        const bool f32 = dtype == kFloat32;
        EXPECT_LT(max_diff(mean, x64.mean(dims)), f32 ? 1e-3 : 1e-11);  // the mean is about 1000
        EXPECT_LT(max_diff(variance, var(x64, dims, false)), f32 ? 1e-5 : 1e-9);
      }
    }
  }
  EXPECT_THAT(error_of([] { batch_norm_stats(randn({3})); }),
              HasSubstr("batch_norm_stats: expected a non-empty input [N, C, ...] of at least 2 dims, got input of "
                        "shape [3]"));
  EXPECT_THAT(error_of([] { batch_norm_stats(ones({2, 3}, kInt64)); }),
              HasSubstr("expected a floating-point input (float32 or float64), got int64"));
}

}  // namespace
}  // namespace cohort
