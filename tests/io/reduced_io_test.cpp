// bfloat16 and float16 in files: safetensors BF16/F16 and .npy <f2, against files written by
// tests/fixtures/generate_reduced.py (PyTorch's bits; numpy.save for the .npy), byte for byte.
#include <gtest/gtest.h>

#include <gmock/gmock.h>

#include <cstring>
#include <map>

#include "cohort/io/npy.h"
#include "cohort/io/safetensors.h"
#include "io/io_test_util.h"
#include "support/error_of.h"

namespace cohort::testing {
namespace {

// Same values as io_tensors() in generate_reduced.py.
std::map<std::string, Tensor> reduced_tensors() {
  const TensorOptions f64(kFloat64);
  return {
      {"bf16", tensor(std::vector<double>{1.0, -2.5, 0.1, 65504.0, 1e-3, 3.0e38}, f64).reshape({2, 3}).to(kBFloat16)},
      {"f16", tensor(std::vector<double>{1.0, -2.5, 0.1, 65504.0, 6e-8, -0.0}, f64).to(kHalf)},
      {"f32", tensor(std::vector<float>{0.5f, 1.5f})},
      {"bf16_scalar", scalar_tensor(-7.0, TensorOptions(kBFloat16))},
  };
}

// Same dtype, shape and bits.
::testing::AssertionResult same_bits(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype() || got.sizes() != want.sizes())
    return ::testing::AssertionFailure() << got.describe() << " vs " << want.describe();
  const Tensor a = got.contiguous(), b = want.contiguous();
  if (std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()) != 0)
    return ::testing::AssertionFailure() << "bytes differ: " << a << " vs " << b;
  return ::testing::AssertionSuccess();
}

class ReducedIo : public ScratchDir {};

TEST_F(ReducedIo, SafetensorsReadsPyTorchBf16AndF16) {
  auto loaded = io::load_safetensors(io_fixture("reduced.safetensors"));
  EXPECT_EQ(loaded.keys(), (std::vector<std::string>{"f32", "bf16", "bf16_scalar", "f16"}));
  auto want = reduced_tensors();
  for (const auto& item : loaded) EXPECT_TRUE(same_bits(item.value(), want[item.key()])) << item.key();
}

TEST_F(ReducedIo, SafetensorsWritesTheSameBytes) {
  io::save_safetensors(path("r.safetensors"), reduced_tensors());
  EXPECT_EQ(read_bytes(path("r.safetensors")), read_bytes(io_fixture("reduced.safetensors")));
  // A strided narrow tensor is saved by value and loads back.
  const Tensor t = reduced_tensors()["bf16"].t();
  io::save_safetensors(path("t.safetensors"), std::map<std::string, Tensor>{{"t", t}});
  EXPECT_TRUE(same_bits(io::load_safetensors(path("t.safetensors"))["t"], t.contiguous()));
}

TEST_F(ReducedIo, NpyReadsAndWritesFloat16) {
  const Tensor loaded = io::load_npy(io_fixture("f2.npy"));
  const Tensor want = reduced_tensors()["f16"].reshape({2, 3});
  EXPECT_TRUE(same_bits(loaded, want));
  io::save_npy(path("f2.npy"), want);
  EXPECT_EQ(read_bytes(path("f2.npy")), read_bytes(io_fixture("f2.npy")));
  // numpy has no bfloat16.
  EXPECT_THAT(error_of([&] { io::save_npy(path("b.npy"), reduced_tensors()["bf16"]); }),
              ::testing::HasSubstr("save_npy: numpy has no bfloat16"));
}

}  // namespace
}  // namespace cohort::testing
