// Shared by tests/io: the reference tensors of tests/fixtures/generate_io.py, a scratch directory per
// test, and byte-level file helpers for building corrupted files out of good ones.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>

#include "cohort/core/tensor.h"
#include "cohort/ops/creation.h"
#include "support/paths.h"

namespace cohort::testing {

namespace fs = std::filesystem;

inline fs::path io_fixture(const std::string& name) { return fs::path(cohort::testing::fixtures_dir()) / "io" / name; }

// Same values as reference_tensors() in generate_io.py.
inline std::map<std::string, Tensor> reference_tensors() {
  Tensor f32 = arange(6, TensorOptions(kFloat32)).reshape({2, 3}) * 0.25 - 0.5;
  return {
      {"f32", f32},
      {"f32_t", f32.t()},
      {"f64", tensor(std::vector<double>{1.0 / 3, -2.5e-300, 1e300})},
      {"i64", tensor(std::vector<int64_t>{-(int64_t{1} << 62), 7, 0, int64_t{1} << 40}).reshape({2, 2})},
      {"i32", scalar_tensor(-123456, TensorOptions(kInt32))},
      {"u8", tensor(std::vector<uint8_t>{0, 1, 128, 255})},
      {"bool", tensor({{true, false, true}, {false, false, true}})},
      {"empty", zeros({0, 3}, TensorOptions(kFloat32))},
  };
}

// Same dtype, same shape, same values (bit for bit for these finite values).
inline ::testing::AssertionResult same_tensor(const Tensor& got, const Tensor& expected) {
  if (got.dtype() != expected.dtype() || got.sizes() != expected.sizes() || !got.equal(expected))
    return ::testing::AssertionFailure() << "got " << got << " (" << got.describe() << "), expected " << expected << " ("
                                         << expected.describe() << ")";
  return ::testing::AssertionSuccess();
}

inline std::string read_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}
inline void write_bytes(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

// A fresh empty directory per test, removed afterwards.
class ScratchDir : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("cohort_io_" + std::to_string(::getpid()) + "_" + info->test_suite_name() + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path path(const std::string& name) const { return dir_ / name; }
  // Names in the directory other than `keep` (temp files left behind show up here).
  std::vector<std::string> others(const std::string& keep) const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_))
      if (e.path().filename() != keep) out.push_back(e.path().filename());
    return out;
  }
  fs::path dir_;
};

}  // namespace cohort::testing
