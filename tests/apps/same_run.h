// Two runs of `cohort train` that must agree: the same metrics (up to float rounding) and final weights,
// or (a resumed run against the one never stopped) the same newest checkpoint, bit for bit.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cohort/io/safetensors.h"
#include "cohort/ops/pointwise.h"
#include "support/run_metrics.h"

#include "app/run_checkpoint.h"

namespace cohort::testing {

// `many` (several processes or machines) against `one`: metrics within float rounding (accuracy within
// two samples of `samples`), the newest checkpoint's weights within 1e-4.
inline void expect_same_run(const std::filesystem::path& one, const std::filesystem::path& many, int samples) {
  expect_same_metrics(one, many, 2.0 / samples);
  auto x = io::load_safetensors(app::list_checkpoints(one).back());
  auto y = io::load_safetensors(app::list_checkpoints(many).back());
  for (const auto& item : x) {
    const std::string& name = item.key();
    if (name.rfind("model/", 0) != 0) continue;
    ASSERT_TRUE(y.contains(name)) << name;
    EXPECT_TRUE(allclose(item.value(), y[name], 1e-4, 1e-5)) << name;
  }
}

// Every tensor of the two runs' newest checkpoints (weights, optimizer state, other modules) is equal.
inline void expect_identical_checkpoints(const std::filesystem::path& a_run, const std::filesystem::path& b_run) {
  const auto a = io::load_safetensors(app::list_checkpoints(a_run).back());
  const auto b = io::load_safetensors(app::list_checkpoints(b_run).back());
  ASSERT_EQ(a.size(), b.size()) << a_run << " and " << b_run;
  for (const auto& item : a) {
    ASSERT_TRUE(b.contains(item.key())) << item.key();
    EXPECT_TRUE(item.value().equal(b[item.key()])) << item.key();
  }
}

}  // namespace cohort::testing
