// Reduced precision on a CPU that computes it slower than float32 (Note [Slow reduced precision] in
// src/ops/autocast.cpp): `cohort info` says which precisions run natively, and training under autocast
// to a slow one warns once, with the reason. A CPU without bfloat16 instructions is made here by
// capping oneDNN's ISA at AVX2 (DNNL_MAX_CPU_ISA), which is what oneDNN then computes with.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cohort/ops/backend.h"
#include "run_cohort.h"
#include "support/paths.h"
#include "support/subprocess.h"

namespace {

namespace fs = std::filesystem;
using cohort::testing::Finished;
using cohort::testing::run_process;
using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> train(const fs::path& out, const std::string& precision) {
  return {cohort::testing::cohort_binary(), "train", "--dataset", "synthetic", "--limit", "128", "--batch-size", "32", "--model", "lenet",
          "--epochs", "1", "--threads", "1", "--precision", precision, "--no-progress", "--out", out.string()};
}

std::vector<std::string> with_avx2_only(std::vector<std::string> argv) {
  argv.insert(argv.begin(), {"/usr/bin/env", "DNNL_MAX_CPU_ISA=AVX2"});
  return argv;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(SlowPrecision, WithoutBfloat16InstructionsInfoAndTrainingSaySo) {
  const fs::path dir = cohort::testing::fresh_test_dir("slow-precision", "avx2");
  fs::create_directories(dir);
  const Finished info = run_process(with_avx2_only({cohort::testing::cohort_binary(), "info"}), dir, "info");
  EXPECT_EQ(info.exit_code, 0) << info.err;
  EXPECT_THAT(info.out, HasSubstr("ISA in use: avx2"));
  EXPECT_THAT(info.out, HasSubstr("bfloat16: no native instructions"));
  EXPECT_THAT(info.out, HasSubstr("float16:  no native kernels"));

  const Finished bf16 = run_process(with_avx2_only(train(dir / "bf16", "bf16")), dir, "bf16");
  EXPECT_EQ(bf16.exit_code, 0) << bf16.err;
  EXPECT_EQ(count(bf16.err, "warning: autocast to bfloat16 is slower than float32 on this CPU"), 1u) << bf16.err;
  EXPECT_THAT(bf16.err, HasSubstr("neither AVX512_BF16 nor AMX (oneDNN's ISA here: avx2)"));
}

// float16 has no native kernels on any CPU with oneDNN 2.6; bfloat16 warns only where it is slow.
TEST(SlowPrecision, Float16AlwaysWarnsAndNativeBfloat16DoesNot) {
  const fs::path dir = cohort::testing::fresh_test_dir("slow-precision", "native");
  fs::create_directories(dir);
  const Finished f16 = run_process(train(dir / "f16", "f16"), dir, "f16");
  EXPECT_EQ(f16.exit_code, 0) << f16.err;
  EXPECT_EQ(count(f16.err, "warning: autocast to float16 is slower than float32 on this CPU"), 1u) << f16.err;
  const Finished bf16 = run_process(train(dir / "bf16", "bf16"), dir, "bf16");
  EXPECT_EQ(bf16.exit_code, 0) << bf16.err;
  if (cohort::computes_natively(cohort::kBFloat16))
    EXPECT_THAT(bf16.err, Not(HasSubstr("warning: autocast to bfloat16")));
  else
    EXPECT_THAT(bf16.err, HasSubstr("warning: autocast to bfloat16"));
  const Finished f32 = run_process(train(dir / "f32", "f32"), dir, "f32");
  EXPECT_THAT(f32.err, Not(HasSubstr("warning: autocast")));
}

}  // namespace
