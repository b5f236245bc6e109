// The vectorisable float exp, sigmoid and tanh (src/ops/cpu/vector_math.h) against float64 libm over
// the whole float range, their special values, the per-ISA loops (activation_loops.h) against the
// scalar functions bit for bit, and the ops' contiguous and strided paths against each other.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/shape.h"
#include "ops/cpu/activation_loops.h"
#include "ops/cpu/vector_math.h"

namespace cohort {
namespace {

namespace vm = kernel::vmath;

// Units in the last place between a float result and the exact value (a double), measured in the
// float spacing at the exact value (the subnormal spacing below the normals).
double ulps(float got, double exact) {
  if (std::isnan(exact)) return std::isnan(got) ? 0 : INFINITY;
  if (std::isinf(exact) || std::fabs(exact) > std::numeric_limits<float>::max())
    return std::isinf(got) && std::signbit(got) == std::signbit(exact) ? 0 : INFINITY;
  const double a = std::max(std::fabs(exact), static_cast<double>(std::numeric_limits<float>::min()));
  const double spacing = std::ldexp(1.0, std::ilogb(a) - 23);
  return std::fabs(static_cast<double>(got) - exact) / spacing;
}

// Every 211th finite float bit pattern, of both signs (some 20 million values).
std::vector<float> sample_floats() {
  std::vector<float> xs;
  for (uint64_t bits = 0; bits < 0x7f800000u; bits += 211) {
    xs.push_back(std::bit_cast<float>(static_cast<uint32_t>(bits)));
    xs.push_back(-xs.back());
  }
  return xs;
}

template <class F, class R>
double max_ulps(F f, R reference, const std::vector<float>& xs, float* worst) {
  double most = 0;
  for (float x : xs) {
    const double u = ulps(f(x), reference(static_cast<double>(x)));
    if (u > most) most = u, *worst = x;
  }
  return most;
}

TEST(VectorMath, ExpIsWithinOneUlpOfFloat64) {
  float worst = 0;
  const double u = max_ulps([](float x) { return vm::exp(x); }, [](double x) { return std::exp(x); }, sample_floats(),
                            &worst);
  EXPECT_LE(u, 1.0) << "at x = " << worst;
}

TEST(VectorMath, SigmoidIsWithinThreeUlpsOfFloat64) {
  float worst = 0;
  const double u = max_ulps([](float x) { return vm::sigmoid(x); },
                            [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, sample_floats(), &worst);
  EXPECT_LE(u, 3.0) << "at x = " << worst;
}

TEST(VectorMath, TanhIsWithinOneAndAHalfUlpsOfFloat64) {
  float worst = 0;
  const double u = max_ulps([](float x) { return vm::tanh(x); }, [](double x) { return std::tanh(x); },
                            sample_floats(), &worst);
  EXPECT_LE(u, 1.5) << "at x = " << worst;
}

TEST(VectorMath, SpecialValuesAreLibms) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(vm::exp(0.f), 1.f);
  EXPECT_EQ(vm::exp(-inf), 0.f);
  EXPECT_EQ(vm::exp(inf), inf);
  EXPECT_EQ(vm::exp(89.f), inf);      // overflows, as expf(89) does
  EXPECT_EQ(vm::exp(-104.f), 0.f);    // underflows past the subnormals
  EXPECT_GT(vm::exp(-100.f), 0.f);    // a subnormal, not flushed
  EXPECT_TRUE(std::isnan(vm::exp(nan)));
  EXPECT_EQ(vm::sigmoid(inf), 1.f);
  EXPECT_EQ(vm::sigmoid(-inf), 0.f);
  EXPECT_EQ(vm::sigmoid(0.f), 0.5f);
  EXPECT_TRUE(std::isnan(vm::sigmoid(nan)));
  EXPECT_EQ(vm::tanh(inf), 1.f);
  EXPECT_EQ(vm::tanh(-inf), -1.f);
  EXPECT_EQ(vm::tanh(50.f), 1.f);
  EXPECT_TRUE(std::signbit(vm::tanh(-0.f)) && vm::tanh(-0.f) == 0.f);
  EXPECT_TRUE(std::isnan(vm::tanh(nan)));
}

// The per-ISA loops compute the scalar functions bit for bit, at lengths that reach the vector
// bodies and their tails.
TEST(VectorMath, LoopsMatchTheScalarFunctionsBitForBit) {
  std::vector<float> x;
  for (int i = 0; i < 1037; ++i) x.push_back(static_cast<float>(i - 518) * 0.0371f);
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  x.push_back(-std::numeric_limits<float>::infinity());
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> out(x.size());
  kernel::vec::exp(out.data(), x.data(), n);
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(std::bit_cast<uint32_t>(out[i]), std::bit_cast<uint32_t>(vm::exp(x[i]))) << x[i];
  kernel::vec::sigmoid(out.data(), x.data(), n);
  for (int64_t i = 0; i < n; ++i)
    EXPECT_EQ(std::bit_cast<uint32_t>(out[i]), std::bit_cast<uint32_t>(vm::sigmoid(x[i]))) << x[i];
  kernel::vec::tanh(out.data(), x.data(), n);
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(std::bit_cast<uint32_t>(out[i]), std::bit_cast<uint32_t>(vm::tanh(x[i]))) << x[i];
}

// exp, sigmoid and tanh of a contiguous tensor (the per-ISA loop) and of a transposed one (the
// strided loop) agree bit for bit.
TEST(VectorMath, ContiguousAndStridedOpsAgree) {
  const Tensor x = randn({67, 45}) * 6;
  const Tensor xt = x.t().contiguous().t();  // the same values, strided
  ASSERT_FALSE(xt.is_contiguous());
  for (auto op : {+[](const Tensor& t) { return t.exp(); }, +[](const Tensor& t) { return t.sigmoid(); },
                  +[](const Tensor& t) { return t.tanh(); }}) {
    const Tensor a = op(x), b = op(xt).contiguous();
    EXPECT_EQ(std::memcmp(a.data_ptr<float>(), b.data_ptr<float>(), sizeof(float) * a.numel()), 0);
  }
}

}  // namespace
}  // namespace cohort
