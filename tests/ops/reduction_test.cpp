// Reductions long enough to be split into fixed chunks (src/ops/cpu/reduce.cpp) merge the chunks in
// order; a NaN or an infinity in any chunk must reach the result, as it does in PyTorch. (The op
// table's special-values samples are too short to be split.)
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "cohort/ops/creation.h"
#include "cohort/core/threads.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"
#include "support/gradcheck.h"

namespace cohort {
namespace {

constexpr int64_t kLong = 3 * 16384 + 5;  // three chunks and a bit, so later chunks are merged

TEST(ReductionChunks, NanInALaterChunkReachesEveryResult) {
  for (DType dtype : {kFloat32, kFloat64}) {
    SCOPED_TRACE(dtype_name(dtype));
    Tensor x = full({kLong}, 0.5, TensorOptions(dtype));
    testing::set_element(x, kLong - 2, NAN);
    EXPECT_TRUE(std::isnan(norm(x, INFINITY).item<double>()));
    EXPECT_TRUE(std::isnan(norm(x, 1).item<double>()));
    EXPECT_TRUE(std::isnan(amax(x).item<double>()));
    EXPECT_TRUE(std::isnan(amin(x).item<double>()));
    EXPECT_TRUE(std::isnan(sum(x).item<double>()));
    EXPECT_EQ(argmax(x).item<int64_t>(), kLong - 2);
    // Two rows reduced along the long dim: also chunked (few outputs), one NaN row, one finite.
    Tensor rows = full({2, kLong}, -0.25, TensorOptions(dtype));
    testing::set_element(rows, kLong + kLong - 1, NAN);
    Tensor n = norm(rows, INFINITY, {1});
    EXPECT_EQ(n[0].item<double>(), 0.25);
    EXPECT_TRUE(std::isnan(n[1].item<double>()));
  }
}

TEST(ReductionChunks, InfinityInALaterChunkReachesTheNorm) {
  Tensor x = full({kLong}, 0.5, TensorOptions(kFloat64));
  testing::set_element(x, kLong - 1, -INFINITY);
  EXPECT_EQ(norm(x, INFINITY).item<double>(), INFINITY);
  EXPECT_EQ(norm(x, 2).item<double>(), INFINITY);
  EXPECT_EQ(amin(x).item<double>(), -INFINITY);
}

// Sums over the rows of a matrix (a bias gradient) walk blocks of columns row by row; each column is
// still its rows added one at a time, in order, in double: the same bits as that loop, with any
// thread count. Also over two leading dims that are one run ([T, N, C] over T and N).
TEST(ReductionColumns, ColumnSumsAreTheSequentialSumsOfEachColumn) {
  manual_seed(7);
  const int before = get_num_threads();
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    Tensor x = randn({37, 5, 131});
    Tensor flat = x.reshape({37 * 5, 131});
    std::vector<float> want(131);
    for (int64_t c = 0; c < 131; ++c) {
      double acc = 0;
      for (int64_t r = 0; r < 37 * 5; ++r) acc += static_cast<double>(flat.data_ptr<float>()[r * 131 + c]);
      want[static_cast<size_t>(c)] = static_cast<float>(acc);
    }
    for (const Tensor& got : {flat.sum(0), x.sum(std::vector<int64_t>{0, 1})}) {
      ASSERT_EQ(got.numel(), 131);
      for (int64_t c = 0; c < 131; ++c) EXPECT_EQ(got.data_ptr<float>()[c], want[static_cast<size_t>(c)]) << c;
    }
  }
  set_num_threads(before);
}

}  // namespace
}  // namespace cohort

