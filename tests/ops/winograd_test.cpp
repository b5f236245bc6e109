// cohort's own Winograd F(4x4, 3x3) kernels (src/ops/dnnl/winograd.cpp), called directly so that
// every padding and edge is reached whatever ConvAlgorithm::Auto would choose: each pass against the
// plain float64 convolution, on 1 and 2 threads, with one block of tiles and several.
#include <gtest/gtest.h>

#include <sstream>

#include "cohort/core/generator.h"
#include "cohort/core/threads.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "ops/cpu/conv_kernels.h"
#include "ops/dnnl/winograd.h"

namespace cohort {
namespace {

struct Case {
  int64_t N, C, O, H, W;
  std::array<int64_t, 2> pad_lo, pad_hi;
  int64_t groups = 1;
};

std::string describe(const Case& c) {
  std::ostringstream s;
  s << "N " << c.N << " C " << c.C << " O " << c.O << " H " << c.H << " W " << c.W << " pad (" << c.pad_lo[0] << ", "
    << c.pad_lo[1] << ") (" << c.pad_hi[0] << ", " << c.pad_hi[1] << ") groups " << c.groups;
  return s.str();
}

// |got - exact| over the largest |exact|: Winograd's error is relative to the output's scale.
double relative_error(const Tensor& got, const Tensor& exact) {
  return (got.to(kFloat64) - exact).abs().max().item<double>() / exact.abs().max().item<double>();
}

// Restores the intra-op thread count when a test ends.
struct ThreadsScope {
  int saved = get_num_threads();
  explicit ThreadsScope(int n) { set_num_threads(n); }
  ~ThreadsScope() { set_num_threads(saved); }
};

const std::vector<Case> kCases = {
    {1, 1, 1, 1, 1, {1, 1}, {1, 1}},    // one pixel, all padding
    {2, 3, 5, 7, 9, {1, 1}, {1, 1}},    // partial tiles at both edges
    {3, 4, 6, 10, 6, {0, 0}, {0, 0}},   // no padding: 8 x 4 output
    {2, 5, 3, 8, 8, {2, 2}, {2, 2}},    // padding 2: output larger than input
    {1, 3, 4, 5, 11, {2, 0}, {1, 2}},   // every side different
    {2, 2, 3, 9, 7, {0, 1}, {1, 0}},    // "same" for an even split
    {6, 4, 4, 34, 34, {1, 1}, {1, 1}},  // 486 tiles: several blocks on one thread
    {2, 24, 40, 12, 12, {1, 1}, {1, 1}},
    {2, 64, 64, 32, 32, {1, 1}, {1, 1}},  // ResNet-18's first stage: blocks across images
    {2, 6, 9, 7, 10, {1, 1}, {1, 1}, 3},  // groups: 2 -> 3 channels each
    {3, 12, 12, 9, 9, {2, 1}, {0, 1}, 12},  // depthwise
};

kernel::Conv2dParams params(const Case& c) {
  kernel::Conv2dParams p;
  p.pad_lo = c.pad_lo;
  p.pad_hi = c.pad_hi;
  p.groups = c.groups;
  return p;
}

TEST(OwnWinograd, ForwardAndBothBackwardsMatchFloat64) {
  manual_seed(11);
  for (int threads : {1, 2}) {
    ThreadsScope scope(threads);
    for (const Case& c : kCases) {
      const kernel::Conv2dParams p = params(c);
      const int64_t P = c.H + c.pad_lo[0] + c.pad_hi[0] - 2, Q = c.W + c.pad_lo[1] + c.pad_hi[1] - 2;
      Tensor x = randn({c.N, c.C, c.H, c.W}), w = randn({c.O, c.C / c.groups, 3, 3}), b = randn({c.O});
      Tensor dy = randn({c.N, c.O, P, Q});
      Tensor x64 = x.to(kFloat64), w64 = w.to(kFloat64), dy64 = dy.to(kFloat64);
      const std::string what = describe(c) + ", threads " + std::to_string(threads);

      Tensor y = empty({c.N, c.O, P, Q}), y64 = empty({c.N, c.O, P, Q}, kFloat64);
      kernel::winograd::forward(y, x, w, b, p);
      kernel::conv2d_forward_reference(y64, x64, w64, b.to(kFloat64), p);
      EXPECT_LT(relative_error(y, y64), 2e-6 * c.C + 1e-6) << "forward, " << what;

      Tensor dx = empty({c.N, c.C, c.H, c.W}), dx64 = empty({c.N, c.C, c.H, c.W}, kFloat64);
      kernel::winograd::backward_data(dx, dy, w, p);
      kernel::conv2d_backward_data_reference(dx64, dy64, w64, p);
      EXPECT_LT(relative_error(dx, dx64), 2e-6 * c.O + 1e-6) << "backward data, " << what;

      Tensor dw = empty({c.O, c.C / c.groups, 3, 3}), db = empty({c.O});
      Tensor dw64 = empty({c.O, c.C / c.groups, 3, 3}, kFloat64), db64 = empty({c.O}, kFloat64);
      kernel::winograd::backward_weights(dw, db, x, dy, p);
      kernel::conv2d_backward_weights_reference(dw64, db64, x64, dy64, p);
      EXPECT_LT(relative_error(dw, dw64), 1e-5) << "backward weights, " << what;
      EXPECT_LT(relative_error(db, db64), 1e-6) << "backward bias, " << what;
    }
  }
}

TEST(OwnWinograd, SameThreadsSameBits) {
  // Blocks are split in fixed ranges and the threads' weight-gradient sums added in thread order.
  manual_seed(12);
  ThreadsScope scope(2);
  const Case c{6, 8, 8, 30, 30, {1, 1}, {1, 1}};
  const kernel::Conv2dParams p = params(c);
  Tensor x = randn({c.N, c.C, c.H, c.W}), dy = randn({c.N, c.O, c.H, c.W});
  Tensor first = empty({c.O, c.C, 3, 3}), second = empty({c.O, c.C, 3, 3});
  kernel::winograd::backward_weights(first, Tensor(), x, dy, p);
  kernel::winograd::backward_weights(second, Tensor(), x, dy, p);
  EXPECT_TRUE(equal(first, second));
}

TEST(OwnWinograd, Fits3x3Stride1UndilatedWithAnyGroups) {
  kernel::Conv2dParams p;
  const Tensor w3 = empty({4, 4, 3, 3}), w5 = empty({4, 4, 5, 5});
  EXPECT_TRUE(kernel::winograd::fits(w3, p));
  EXPECT_FALSE(kernel::winograd::fits(w5, p));
  p.stride = {1, 2};
  EXPECT_FALSE(kernel::winograd::fits(w3, p));
  p.stride = {1, 1};
  p.dilation = {2, 2};
  EXPECT_FALSE(kernel::winograd::fits(w3, p));
  p.dilation = {1, 1};
  p.groups = 2;
  EXPECT_TRUE(kernel::winograd::fits(empty({4, 2, 3, 3}), p));
  EXPECT_EQ(kernel::winograd::tile_count(2, 5, 8), 2 * 2 * 2);
}

}  // namespace
}  // namespace cohort
