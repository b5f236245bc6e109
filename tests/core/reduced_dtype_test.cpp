// bfloat16 and float16 as dtypes: the element types' rounding, the dtype's name/size/kind, PyTorch's
// promotion rules for every pair (tests/fixtures/reduced.json, generate_reduced.py), and printing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

#include "cohort/core/half.h"
#include "cohort/core/tensor.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/pointwise.h"
#include "support/error_of.h"
#include "support/pytorch_fixture.h"

namespace cohort {
namespace {

using nlohmann::json;

DType named(const std::string& name) {
  for (DType t : {kBool, kUInt8, kInt32, kInt64, kFloat32, kFloat64, kBFloat16, kFloat16})
    if (name == dtype_name(t)) return t;
  throw std::runtime_error("unknown dtype " + name);
}

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(ReducedDType, NamesSizesAndKinds) {
  EXPECT_STREQ(dtype_name(kBFloat16), "bfloat16");
  EXPECT_STREQ(dtype_name(kHalf), "float16");
  EXPECT_EQ(kFloat16, kHalf);
  EXPECT_EQ(kF16, kHalf);
  EXPECT_EQ(element_size(kBFloat16), 2u);
  EXPECT_EQ(element_size(kHalf), 2u);
  EXPECT_TRUE(is_floating_point(kBFloat16) && is_floating_point(kHalf));
  EXPECT_TRUE(is_reduced_floating_point(kBFloat16) && is_reduced_floating_point(kHalf));
  EXPECT_FALSE(is_reduced_floating_point(kFloat32) || is_reduced_floating_point(kInt32));
  EXPECT_FALSE(is_integral(kBFloat16, true));
  EXPECT_EQ(dtype_v<BFloat16>, kBFloat16);
  EXPECT_EQ(dtype_v<Half>, kHalf);
  EXPECT_EQ(kNumDTypes, 8);
  std::ostringstream os;
  os << kBFloat16 << " " << kHalf;
  EXPECT_EQ(os.str(), "bfloat16 float16");
  EXPECT_EQ(zeros({2}, TensorOptions(kBFloat16)).toString(), "CPUBFloat16Type");
  EXPECT_EQ(zeros({2}, TensorOptions(kHalf)).toString(), "CPUHalfType");
  EXPECT_THROW(set_default_dtype(kBFloat16), TypeError);
}

TEST(ReducedDType, ElementTypesRoundToNearestEven) {
  EXPECT_EQ(BFloat16(1.0f).x, 0x3f80);
  EXPECT_EQ(static_cast<float>(BFloat16(1.1f)), 1.1015625f);
  EXPECT_EQ(BFloat16(from_bits(0x3f808000)).x, 0x3f80);  // tie, even kept part: down
  EXPECT_EQ(BFloat16(from_bits(0x3f818000)).x, 0x3f82);  // tie, odd kept part: up
  EXPECT_EQ(BFloat16(from_bits(0x3f808001)).x, 0x3f81);
  EXPECT_EQ(BFloat16(from_bits(0x7f7fffff)).x, 0x7f80);  // float32's max rounds to inf
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(std::numeric_limits<float>::quiet_NaN()))));
  EXPECT_EQ(Half(1.0f).x, 0x3c00);
  EXPECT_EQ(Half(65504.0f).x, 0x7bff);
  EXPECT_EQ(Half(65519.0f).x, 0x7bff);
  EXPECT_EQ(Half(65520.0f).x, 0x7c00);  // half-way past the max: inf
  EXPECT_EQ(Half(-1e9f).x, 0xfc00);
  EXPECT_EQ(Half(std::ldexp(1.0f, -24)).x, 0x0001);  // smallest subnormal
  EXPECT_EQ(Half(std::ldexp(1.0f, -25)).x, 0x0000);  // tie with 0: even
  EXPECT_EQ(Half(std::ldexp(3.0f, -25)).x, 0x0002);  // tie between 1 and 2 units: even
  EXPECT_EQ(static_cast<float>(Half(uint16_t{0x0001}, Half::from_bits())), std::ldexp(1.0f, -24));
  EXPECT_EQ(Half(-0.0f).x, 0x8000);
  EXPECT_TRUE(std::isnan(static_cast<float>(Half(std::numeric_limits<float>::quiet_NaN()))));
  // Arithmetic goes through float.
  BFloat16 a = 1.5f, b = 2.25f;
  EXPECT_EQ(static_cast<float>(a * b), 3.375f);
  EXPECT_EQ(a * 2.0f, 3.0f);
  EXPECT_EQ(static_cast<float>(-a), -1.5f);
  a += b;
  EXPECT_EQ(static_cast<float>(a), 3.75f);
  EXPECT_TRUE(a > b);
  EXPECT_EQ(static_cast<float>(std::numeric_limits<Half>::max()), 65504.0f);
  EXPECT_EQ(static_cast<float>(std::numeric_limits<BFloat16>::epsilon()), 0.0078125f);
}

// Every fixture value against PyTorch's .bfloat16() and .half(), through the element types (the
// vectorised tensor conversions are checked against the same values in tests/ops/reduced_dtype_test.cpp).
// NaN is compared as NaN: PyTorch's vectorised copy writes 0xFFFF for a bfloat16 NaN, c10::BFloat16 0x7FC0.
TEST(ReducedDType, ElementConversionsMatchPyTorch) {
  const json& c = testing::load_fixture("reduced.json").at("convert");
  const auto bits = c.at("float32_bits").get<std::vector<uint32_t>>();
  const auto bf = c.at("bfloat16").get<std::vector<uint16_t>>(), hf = c.at("float16").get<std::vector<uint16_t>>();
  ASSERT_EQ(bits.size(), bf.size());
  for (size_t i = 0; i < bits.size(); ++i) {
    const float x = from_bits(bits[i]);
    if (std::isnan(x)) {
      EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(x))));
      EXPECT_EQ(Half(x).x, hf[i]) << std::hex << bits[i];
      continue;
    }
    EXPECT_EQ(BFloat16(x).x, bf[i]) << "bfloat16 of float32 bits 0x" << std::hex << bits[i];
    EXPECT_EQ(Half(x).x, hf[i]) << "float16 of float32 bits 0x" << std::hex << bits[i];
  }
  // float64 sources: through float32 (PyTorch rounds twice too).
  const auto d = c.at("float64").get<std::vector<double>>();
  const Tensor t = tensor(d, TensorOptions(kFloat64));
  const Tensor tb = t.to(kBFloat16), th = t.to(kHalf);
  for (size_t i = 0; i < d.size(); ++i) {
    EXPECT_EQ(tb.data_ptr<BFloat16>()[i].x, c.at("float64_bfloat16")[i].get<uint16_t>()) << d[i];
    EXPECT_EQ(th.data_ptr<Half>()[i].x, c.at("float64_float16")[i].get<uint16_t>()) << d[i];
  }
}

// Half -> float is exact for all 65536 patterns, and float -> half gives the pattern back.
TEST(ReducedDType, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const float f = Half(static_cast<uint16_t>(h), Half::from_bits());
    if (std::isnan(f)) continue;
    EXPECT_EQ(Half(f).x, h) << std::hex << h;
    const float g = BFloat16(static_cast<uint16_t>(h), BFloat16::from_bits());
    if (!std::isnan(g)) EXPECT_EQ(BFloat16(g).x, h) << std::hex << h;
  }
}

TEST(ReducedDType, PromoteTypesMatchesPyTorchForEveryPair) {
  const json& pairs = testing::load_fixture("reduced.json").at("promote_types");
  ASSERT_EQ(pairs.size(), 64u);
  for (const json& p : pairs)
    EXPECT_EQ(promote_types(named(p[0]), named(p[1])), named(p[2])) << p[0] << " with " << p[1];
}

TEST(ReducedDType, ResultTypeMatchesPyTorch) {
  const json& cases = testing::load_fixture("reduced.json").at("result_type");
  for (const json& c : cases) {
    const Tensor a = zeros({2}, TensorOptions(named(c[0])));
    const std::string other = c[1];
    DType got;
    if (other.rfind("tensor0d:", 0) == 0) {
      got = result_type(a, zeros({}, TensorOptions(named(other.substr(9)))));
    } else {
      const std::string kind = other.substr(7);
      got = result_type(a, kind == "bool" ? Scalar(true) : kind == "int" ? Scalar(2) : Scalar(2.5));
    }
    EXPECT_EQ(got, named(c[2])) << c[0] << " with " << other;
  }
  // The ops follow it: a Python float does not widen a narrow tensor, ints join it, float32 wins.
  const Tensor b = ones({3}, TensorOptions(kBFloat16));
  EXPECT_EQ((b * 2.5).dtype(), kBFloat16);
  EXPECT_EQ((ones({3}, TensorOptions(kInt32)) + b).dtype(), kBFloat16);
  EXPECT_EQ((b + ones({3}, TensorOptions(kHalf))).dtype(), kFloat32);
  EXPECT_EQ((b + ones({3}, TensorOptions(kFloat32))).dtype(), kFloat32);
  EXPECT_EQ((ones({3}, TensorOptions(kHalf)) / 3).dtype(), kHalf);
}

TEST(ReducedDType, ReprMatchesPyTorch) {
  for (const json& c : testing::load_fixture("reduced.json").at("repr")) {
    std::vector<double> v;
    for (const json& x : c.at("values")) v.push_back(x.is_string() ? (x == "nan" ? NAN : x == "inf" ? INFINITY : -INFINITY)
                                                                      : x.get<double>());
    const Tensor t = tensor(v, TensorOptions(kFloat64)).reshape(c.at("shape").get<Shape>()).to(named(c.at("dtype")));
    EXPECT_EQ(repr(t), c.at("repr").get<std::string>());
  }
}

TEST(ReducedDType, LibtorchPrintingNamesTheType) {
  std::ostringstream os;
  os << tensor(std::vector<double>{1.5, -2}, TensorOptions(kFloat64)).to(kBFloat16);
  EXPECT_NE(os.str().find("[ CPUBFloat16Type{2} ]"), std::string::npos) << os.str();
  EXPECT_NE(os.str().find("1.5000"), std::string::npos) << os.str();
}

TEST(ReducedDType, ItemAndDataPtr) {
  const Tensor t = full({}, 0.1, TensorOptions(kBFloat16));
  EXPECT_EQ(t.item<float>(), static_cast<float>(BFloat16(0.1f)));
  EXPECT_TRUE(t.item().is_floating_point());
  EXPECT_EQ(t.data_ptr<BFloat16>()->x, BFloat16(0.1f).x);
  EXPECT_THROW(t.data_ptr<Half>(), TypeError);
}

}  // namespace
}  // namespace cohort
