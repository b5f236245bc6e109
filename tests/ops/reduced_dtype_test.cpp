// bfloat16 and float16 tensors in the ops: the vectorised conversions (every CPU path against the
// portable loop and against PyTorch's bits, tests/fixtures/reduced.json), to()/copy_ between every
// dtype pair, creation, autograd (a narrow leaf gets a narrow gradient), and the op table run in
// each narrow dtype: every row either matches its float64 run on the same (rounded) inputs within
// what the format allows, with a result of the narrow dtype, or refuses with a cohort error that
// names the dtype. Test names: ReducedOpTable/*.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <random>
#include <set>
#include <string>

#include "cohort/autograd/engine.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/core/half.h"
#include "cohort/ops/activation.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/dropout.h"
#include "cohort/ops/loss.h"
#include "cohort/ops/linalg.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "ops/cpu/reduced.h"
#include "support/error_of.h"
#include "support/gradcheck.h"
#include "support/op_table.h"
#include "support/pytorch_fixture.h"

namespace cohort::testing {
namespace {

using nlohmann::json;

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

bool is_nan_bits(uint32_t u) { return (u & 0x7fffffffu) > 0x7f800000u; }

// Random float32 bit patterns, weighted towards the hard ones: ties, subnormals, NaN.
std::vector<float> hard_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    uint32_t u = rng();
    switch (rng() % 6) {
      case 0: u = (u & 0xffff0000u) | 0x8000u; break;                  // bfloat16 tie
      case 1: u = (u & 0xffffe000u) | 0x1000u; break;                  // half tie
      case 2: u &= 0x807fffffu; break;                                 // float32 subnormal
      case 3: u = (u & 0x80ffffffu) | (static_cast<uint32_t>(100 + rng() % 20) << 23); break;  // half subnormal range
      default: break;
    }
    v[i] = from_bits(u);
  }
  return v;
}

TEST(ReducedConversions, VectorLoopsMatchThePortableOnes) {
  std::cout << "[ narrow conversions ] bfloat16: " << kernel::vec::bfloat16_conversion_isa()
            << ", float16: " << kernel::vec::half_conversion_isa() << "\n";
  for (size_t n : {0, 1, 7, 8, 15, 16, 31, 32, 33, 64, 100, 1000, 100003}) {
    const std::vector<float> x = hard_floats(n, static_cast<uint32_t>(n));
    std::vector<uint16_t> fast(n), portable(n);
    kernel::vec::float_to_bfloat16(fast.data(), x.data(), static_cast<int64_t>(n));
    kernel::vec::float_to_bfloat16_portable(portable.data(), x.data(), static_cast<int64_t>(n));
    EXPECT_EQ(fast, portable) << "float -> bfloat16, n = " << n;
    kernel::vec::float_to_half(fast.data(), x.data(), static_cast<int64_t>(n));
    kernel::vec::float_to_half_portable(portable.data(), x.data(), static_cast<int64_t>(n));
    EXPECT_EQ(fast, portable) << "float -> half, n = " << n;
    kernel::vec::float_to_bfloat16_portable(portable.data(), x.data(), static_cast<int64_t>(n));
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(portable[i], BFloat16(x[i]).x) << "the element type rounds alike";
  }
  // Every half pattern widens exactly, in both loops.
  std::vector<uint16_t> all(65536);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint16_t>(i);
  std::vector<float> fast(all.size()), portable(all.size());
  kernel::vec::half_to_float(fast.data(), all.data(), 65536);
  kernel::vec::half_to_float_portable(portable.data(), all.data(), 65536);
  for (size_t i = 0; i < all.size(); ++i) {
    if (std::isnan(portable[i])) {
      EXPECT_TRUE(std::isnan(fast[i])) << std::hex << i;
      continue;
    }
    uint32_t a, b;
    std::memcpy(&a, &fast[i], 4);
    std::memcpy(&b, &portable[i], 4);
    ASSERT_EQ(a, b) << "half 0x" << std::hex << i;
  }
}

// The tensor conversions (vectorised, long enough for the vector bodies) give PyTorch's bits.
TEST(ReducedConversions, TensorConversionsMatchPyTorchBitForBit) {
  const json& c = load_fixture("reduced.json").at("convert");
  const auto bits = c.at("float32_bits").get<std::vector<uint32_t>>();
  const auto bf = c.at("bfloat16").get<std::vector<uint16_t>>(), hf = c.at("float16").get<std::vector<uint16_t>>();
  const int64_t n = static_cast<int64_t>(bits.size());
  Tensor x = empty({n}, TensorOptions(kFloat32));
  std::memcpy(x.data_ptr(), bits.data(), bits.size() * 4);
  for (bool strided : {false, true}) {
    const Tensor src = strided ? make_noncontiguous(x) : x;
    const Tensor b = src.bfloat16(), h = src.half();
    ASSERT_EQ(b.dtype(), kBFloat16);
    ASSERT_EQ(h.dtype(), kHalf);
    for (int64_t i = 0; i < n; ++i) {
      const uint16_t gb = b.data_ptr<BFloat16>()[i].x, gh = h.data_ptr<Half>()[i].x;
      if (is_nan_bits(bits[i])) {
        EXPECT_EQ(gb, 0x7fc0);  // PyTorch's vectorised copy writes 0xFFFF, c10::BFloat16 0x7FC0: both NaN
      } else {
        EXPECT_EQ(gb, bf[i]) << "bfloat16 of 0x" << std::hex << bits[i] << (strided ? " (strided)" : "");
      }
      EXPECT_EQ(gh, hf[i]) << "float16 of 0x" << std::hex << bits[i] << (strided ? " (strided)" : "");
    }
    // Back to float32: exact.
    const Tensor back = b.to(kFloat), back_h = h.to(kFloat32);
    for (int64_t i = 0; i < n; ++i) {
      if (is_nan_bits(bits[i])) continue;
      EXPECT_EQ(back.data_ptr<float>()[i], static_cast<float>(BFloat16(from_bits(bits[i]))));
      EXPECT_EQ(back_h.data_ptr<float>()[i], static_cast<float>(Half(from_bits(bits[i]))));
    }
  }
}

TEST(ReducedConversions, EveryDTypePairConverts) {
  const Tensor v = tensor(std::vector<double>{0, 1, -2, 3.5, 100, 0.1}, TensorOptions(kFloat64));
  for (DType from : {kBool, kUInt8, kInt32, kInt64, kFloat32, kFloat64, kBFloat16, kHalf}) {
    for (DType to : {kBool, kUInt8, kInt32, kInt64, kFloat32, kFloat64, kBFloat16, kHalf}) {
      Tensor src = (from == kUInt8 || from == kBool ? v.abs() : v).to(from);
      // Into a narrow dtype through float32, as PyTorch converts; from one exactly.
      Tensor got = src.to(to), want = is_reduced_floating_point(to)     ? src.to(kFloat64).to(kFloat32).to(to)
                                      : is_reduced_floating_point(from) ? src.to(kFloat32).to(to)
                                                                        : src.to(to);
      ASSERT_EQ(got.dtype(), to);
      EXPECT_TRUE(got.to(kFloat64).equal(want.to(kFloat64))) << from << " -> " << to;
      // Into a strided destination, and broadcast.
      Tensor dst = zeros({6, 2}, TensorOptions(to)).t();
      dst.copy_(src);
      EXPECT_TRUE(dst[1].to(kFloat64).equal(want.to(kFloat64))) << from << " -> strided " << to;
    }
  }
}

TEST(ReducedConversions, Creation) {
  for (DType t : {kBFloat16, kHalf}) {
    const TensorOptions o(t);
    EXPECT_EQ(empty({2, 3}, o).dtype(), t);
    EXPECT_EQ(zeros({2}, o).to(kFloat32).sum().item<float>(), 0.0f);
    EXPECT_EQ(ones({4}, o).to(kFloat32).sum().item<float>(), 4.0f);
    EXPECT_EQ(full({3}, 0.1, o).to(kFloat32)[0].item<float>(), t == kHalf ? static_cast<float>(Half(0.1f))
                                                                         : static_cast<float>(BFloat16(0.1f)));
    const Tensor a = arange(0, 5, 1, o);
    EXPECT_EQ(a.dtype(), t);
    EXPECT_TRUE(a.to(kFloat64).equal(arange(0, 5, 1, TensorOptions(kFloat64))));
    const Tensor r = rand({1000}, o), n = randn({1000}, o);
    EXPECT_EQ(r.dtype(), t);
    EXPECT_EQ(n.dtype(), t);
    EXPECT_GE(r.to(kFloat32).min().item<float>(), 0.0f);
    EXPECT_LT(r.to(kFloat32).max().item<float>(), 1.0f);
    EXPECT_NEAR(n.to(kFloat32).mean().item<float>(), 0.0f, 0.15f);
    EXPECT_EQ(zeros_like(a).dtype(), t);
    EXPECT_EQ(a.clone().dtype(), t);
    EXPECT_TRUE(a.reshape({5, 1}).t().contiguous().view({5}).equal(a));
  }
}

// The gradient of a narrow leaf has its dtype, through arithmetic, matmul, softmax and reductions.
TEST(ReducedAutograd, GradientsKeepTheNarrowDType) {
  for (DType t : {kBFloat16, kHalf}) {
    Tensor x = randn({3, 4}, TensorOptions(t)).requires_grad_(true);
    Tensor w = randn({5, 4}, TensorOptions(t)).requires_grad_(true);
    Tensor y = linear(x, w).relu().softmax(1) * 2.5;
    Tensor loss = (y.sum(1) + x.exp().mean(1) + matmul(x, x.t()).sum(1)).sum();
    EXPECT_EQ(loss.dtype(), t);
    loss.backward();
    ASSERT_TRUE(x.grad().defined());
    EXPECT_EQ(x.grad().dtype(), t);
    EXPECT_EQ(w.grad().dtype(), t);
    // Close to the float64 gradient of the same values.
    Tensor x64 = x.detach().to(kFloat64).requires_grad_(true), w64 = w.detach().to(kFloat64).requires_grad_(true);
    Tensor y64 = linear(x64, w64).relu().softmax(1) * 2.5;
    ((y64.sum(1) + x64.exp().mean(1) + matmul(x64, x64.t()).sum(1)).sum()).backward();
    const double tol = t == kBFloat16 ? 0.05 : 0.01;
    EXPECT_LT(max_abs_diff(x.grad(), x64.grad()), tol * (1 + x64.grad().abs().max().item<double>()));
    EXPECT_LT(max_abs_diff(w.grad(), w64.grad()), tol * (1 + w64.grad().abs().max().item<double>()));
  }
}

// A narrow tensor with a Python number gives PyTorch's bits (the number rounded to the narrow type).
TEST(ReducedOps, ArithmeticWithNumbersMatchesPyTorchBitForBit) {
  const json& f = load_fixture("reduced.json").at("scalar_ops");
  const Tensor x = tensor(f.at("x").get<std::vector<float>>());
  for (DType t : {kBFloat16, kHalf}) {
    const Tensor b = x.to(t);
    const std::vector<std::pair<std::string, Tensor>> got = {
        {"mul_0.1", b * 0.1}, {"add_0.1", b + 0.1}, {"sub_0.7", b - 0.7}, {"div_0.3", b / 0.3}};
    const json& want = f.at(dtype_name(t));
    auto same = [&](const std::string& name, const Tensor& r) {
      ASSERT_EQ(r.dtype(), t) << name;
      const auto bits = want.at(name).get<std::vector<uint16_t>>();
      ASSERT_EQ(static_cast<size_t>(r.numel()), bits.size());
      const auto* p = static_cast<const uint16_t*>(r.contiguous().data_ptr());
      for (size_t i = 0; i < bits.size(); ++i) EXPECT_EQ(p[i], bits[i]) << name << " in " << t << ", element " << i;
    };
    for (const auto& [name, r] : got) same(name, r);
    if (t == kBFloat16) same("add_alpha_0.3", b.add(b, 0.3));
  }
}

// Ops the table has no row for: the narrow result is the float64 one on the same inputs, rounded.
TEST(ReducedOps, ActivationsLinearAndLosses) {
  for (DType t : {kBFloat16, kHalf}) {
    const double tol = t == kBFloat16 ? std::ldexp(1.0, -7) : std::ldexp(1.0, -10);
    const Tensor x = randn({4, 6}, TensorOptions(t)), w = randn({3, 6}, TensorOptions(t)), b = randn({3}, TensorOptions(t));
    const Tensor x64 = x.to(kFloat64), w64 = w.to(kFloat64), b64 = b.to(kFloat64);
    auto check = [&](const char* what, const Tensor& got, const Tensor& want) {
      EXPECT_EQ(got.dtype(), t) << what;
      EXPECT_LE(max_abs_diff(got, want), tol * (1 + want.abs().max().item<double>())) << what << " in " << t;
    };
    check("gelu", gelu(x), gelu(x64));
    check("gelu tanh", gelu(x, "tanh"), gelu(x64, "tanh"));
    check("silu", silu(x), silu(x64));
    check("linear", linear(x, w, b), linear(x64, w64, b64));
    check("mse_loss", mse_loss(x, x * 0.5 + 1), mse_loss(x64, x64 * 0.5 + 1));
    const Tensor d = dropout(x, 0.5, true);
    EXPECT_EQ(d.dtype(), t);
    const Tensor target = tensor(std::vector<int64_t>{0, 5, 2, 2});
    check("cross_entropy", cross_entropy_loss(x, target), cross_entropy_loss(x64, target));
  }
}

// --- The op table in bfloat16 and float16 ------------------------------------------------------

// The error allowed, relative to the output's magnitude: 2^-8 for bfloat16 (8 significand bits),
// 2^-11 for float16 (11), i.e. two roundings of half a unit each - the op's float32 result rounded
// once, plus one more for ops composed of narrow ops (linear, layer_norm, var's mean) - with the same
// absolute slack scaled by the largest output, for elements that cancel. Every row passes at these
// bounds, and at a 64th of them most rows fail, so the check is live.
double narrow_tol(DType t) { return t == kBFloat16 ? std::ldexp(1.0, -8) : std::ldexp(1.0, -11); }

// The recurrent layers (lstm, gru, rnn_tanh, rnn_relu over whole sequences) chain a handful of narrow
// ops per step over every step and two layers, each result rounded, as PyTorch's composed CPU layers
// do: their error grows along the chain, and 8 times the bound holds for the table's rows.
double row_tol(const OpRow& row, DType t) {
  const bool chained = row.name.find("_padded_") != std::string::npos || row.name.find("_packed_") != std::string::npos;
  return (chained ? 8 : 1) * narrow_tol(t);
}

struct NarrowRun {
  bool supported = false;
  std::string failure;  // empty: passed (supported and close, or refused properly)
  std::string refusal;  // the error message, when refused
};

NarrowRun run_narrow(const OpRow& row, DType t) {
  NarrowRun r;
  const std::string what = row.name + " in " + dtype_name(t);
  for (size_t s = 0; s < row.samples.size(); ++s) {
    std::vector<Tensor> wide = make_inputs(row, s, kFloat64), narrow;
    bool any_narrow = false;
    for (Tensor& x : wide) {
      if (x.dtype() == kFloat64) {
        narrow.push_back(x.to(t));
        x = narrow.back().to(kFloat64);  // the float64 run sees the same rounded values
        any_narrow = true;
      } else {
        narrow.push_back(x);
      }
    }
    if (!any_narrow) return r;  // nothing to narrow: not this test's business
    NoGradGuard no_grad;
    std::vector<Tensor> got;
    try {
      got = row.op(narrow);
    } catch (const Error& e) {
      r.refusal = e.what();
      // Named: the dtype, and the op (the message starts with it; "this op" is dispatch() without a name).
      if (r.refusal.find(dtype_name(t)) == std::string::npos || r.refusal.find("internal assert") != std::string::npos ||
          r.refusal.rfind("this op", 0) == 0)
        r.failure = what + ": refused without naming the op and " + dtype_name(t) + ": " + r.refusal;
      return r;
    }
    r.supported = true;
    const std::vector<Tensor> want = row.op(wide);
    if (got.size() != want.size()) {
      r.failure = what + ": " + std::to_string(got.size()) + " outputs, float64 gives " + std::to_string(want.size());
      return r;
    }
    for (size_t o = 0; o < got.size(); ++o) {
      if (!got[o].defined() || !want[o].defined()) continue;
      const DType expected = want[o].dtype() == kFloat64 && !row.fixed_dtype ? t : want[o].dtype();
      if (got[o].dtype() != expected) {
        r.failure = what + ": output " + std::to_string(o) + " is " + dtype_name(got[o].dtype()) + ", expected " +
                    dtype_name(expected);
        return r;
      }
      if (got[o].sizes() != want[o].sizes()) {
        r.failure = what + ": output " + std::to_string(o) + " has the wrong shape";
        return r;
      }
      const Tensor g = got[o].to(kFloat64).contiguous(), w = want[o].to(kFloat64).contiguous();
      const double* gp = g.data_ptr<double>();
      const double* wp = w.data_ptr<double>();
      double scale = 0;
      for (int64_t e = 0; e < w.numel(); ++e)
        if (std::isfinite(wp[e])) scale = std::max(scale, std::abs(wp[e]));
      const double tol = row_tol(row, t);
      for (int64_t e = 0; e < w.numel(); ++e) {
        const double gv = gp[e], wv = wp[e];
        const bool ok = std::isnan(wv) ? std::isnan(gv)
                        : std::isinf(wv) ? gv == wv
                                         : std::abs(gv - wv) <= tol * (std::abs(wv) + std::max(1.0, scale));
        if (!ok) {
          r.failure = what + ", sample " + std::to_string(s) + ": output " + std::to_string(o) + " element " +
                      std::to_string(e) + ": expected " + std::to_string(wv) + ", got " + std::to_string(gv);
          return r;
        }
      }
    }
  }
  return r;
}

// The rows that must run in the narrow dtypes (the rest may refuse, by name; today none does).
const std::set<std::string>& required_rows() {
  static const std::set<std::string> rows = {
      "add", "sub", "mul", "div", "neg", "abs", "exp", "log", "tanh", "sigmoid", "relu", "sqrt", "eq", "lt", "gt",
      "where", "masked_fill", "sum", "mean", "max", "min", "max_dim", "argmax", "var", "norm_2", "softmax_dim1",
      "log_softmax_dim1", "matmul", "mm", "bmm", "view", "reshape", "permute", "transpose", "cat", "stack",
      "clone", "contiguous", "to_float32", "index_select", "gather_dim1", "cumsum", "sort", "embedding",
      // the layer kernels (tests/ops/bf16_kernels_test.cpp checks them more closely)
      "conv2d", "conv2d_strided_grouped_dilated", "conv2d_same", "conv1d", "conv_transpose2d",
      "conv_transpose2d_strided_grouped", "conv_transpose1d", "max_pool2d", "max_pool2d_with_indices", "avg_pool2d",
      "avg_pool2d_ceil_exclude_pad", "adaptive_avg_pool2d", "adaptive_max_pool2d", "batch_norm_training",
      "batch_norm_running_stats", "batch_norm_eval", "batch_norm_no_affine_no_stats", "nll_loss_mean",
      "nll_loss_none", "nll_loss_weight_ignore_mean"};
  return rows;
}

class ReducedOpTable : public ::testing::TestWithParam<DType> {};

TEST_P(ReducedOpTable, EveryRowRunsOrRefusesByName) {
  const DType t = GetParam();
  std::vector<std::string> supported, refused;
  std::set<std::string> names;
  for (const OpRow& row : op_table()) {
    names.insert(row.name);
    NarrowRun r = run_narrow(row, t);
    EXPECT_TRUE(r.failure.empty()) << r.failure;
    if (r.supported) supported.push_back(row.name);
    else if (!r.refusal.empty()) refused.push_back(row.name);
    if (required_rows().count(row.name)) EXPECT_TRUE(r.supported) << row.name << " must run in " << t << ": " << r.refusal;
  }
  for (const std::string& name : required_rows()) EXPECT_TRUE(names.count(name)) << "no op-table row " << name;
  std::cout << "[ " << t << " ] " << supported.size() << " rows run:";
  for (const auto& n : supported) std::cout << " " << n;
  std::cout << "\n[ " << t << " ] " << refused.size() << " rows refuse:";
  for (const auto& n : refused) std::cout << " " << n;
  std::cout << "\n";
}

INSTANTIATE_TEST_SUITE_P(Narrow, ReducedOpTable, ::testing::Values(kBFloat16, kHalf),
                         [](const ::testing::TestParamInfo<DType>& info) { return std::string(dtype_name(info.param)); });

}  // namespace
}  // namespace cohort::testing
