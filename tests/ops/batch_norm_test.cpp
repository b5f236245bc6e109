// batch_norm_stats and batch_norm_with_stats: per-channel mean and biased variance in float64, on
// float32/float64 and strided inputs far from zero. batch_norm's values, strided inputs and gradients are in the op table
// (tests/ops/op_table_nn_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cohort/core/generator.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/normalization.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "support/pytorch_fixture.h"
#include "support/error_of.h"
#include "support/gradcheck.h"

namespace cohort {
namespace {

using ::testing::HasSubstr;
using testing::error_of;

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
        EXPECT_LT(testing::max_abs_diff(mean, x64.mean(dims)), f32 ? 1e-3 : 1e-11);  // the mean is about 1000
        EXPECT_LT(testing::max_abs_diff(variance, var(x64, dims, false)), f32 ? 1e-5 : 1e-9);
      }
    }
  }
  EXPECT_THAT(error_of([] { batch_norm_stats(randn({3})); }),
              HasSubstr("batch_norm_stats: expected a non-empty input [N, C, ...] of at least 2 dims, got input of "
                        "shape [3]"));
  EXPECT_THAT(error_of([] { batch_norm_stats(ones({2, 3}, kInt64)); }),
              HasSubstr("expected a floating-point input (float32, float64, bfloat16 or float16), got int64"));
}

// batch_norm_with_stats returns batch_norm's output and the statistics it normalised with: the
// batch's in training (the same as batch_norm_stats, and what the running statistics moved by), the
// running ones in evaluation.
TEST(BatchNormWithStats, OutputOfBatchNormAndItsStatistics) {
  manual_seed(23);
  for (DType dtype : {kFloat32, kFloat64}) {
    SCOPED_TRACE(::testing::Message() << dtype);
    Tensor x = randn({4, 3, 5}, dtype) * 2 + 10, w = randn({3}, dtype), b = randn({3}, dtype);
    Tensor rm = zeros({3}, dtype), rv = ones({3}, dtype), rm2 = rm.clone(), rv2 = rv.clone();
    auto [y, mean, var] = batch_norm_with_stats(x, w, b, rm, rv, true, 0.5, 1e-5);
    EXPECT_EQ(testing::max_abs_diff(y, batch_norm(x, w, b, rm2, rv2, true, 0.5, 1e-5)), 0.0);
    EXPECT_EQ(testing::max_abs_diff(rm, rm2), 0.0);
    auto [mean_ref, var_ref] = batch_norm_stats(x);
    const bool f32 = dtype == kFloat32;
    EXPECT_LT(testing::max_abs_diff(mean, mean_ref), f32 ? 1e-5 : 1e-12);
    EXPECT_LT(testing::max_abs_diff(var, var_ref), f32 ? 1e-5 : 1e-11);
    EXPECT_EQ(mean.dtype(), kFloat64);
    EXPECT_FALSE(mean.requires_grad() || var.requires_grad());
    // running = 0.5 running + 0.5 batch, with the unbiased batch variance (20 values per channel).
    EXPECT_LT(testing::max_abs_diff(rm, mean * 0.5), f32 ? 1e-5 : 1e-12);
    EXPECT_LT(testing::max_abs_diff(rv, var * (20.0 / 19.0) * 0.5 + 0.5), f32 ? 1e-5 : 1e-11);
    auto [y_eval, mean_eval, var_eval] = batch_norm_with_stats(x, w, b, rm, rv, false, 0.5, 1e-5);
    EXPECT_LT(testing::max_abs_diff(mean_eval, rm), 1e-12);
    EXPECT_LT(testing::max_abs_diff(var_eval, rv), f32 ? 1e-6 : 1e-11);
  }
}

}  // namespace
}  // namespace cohort
