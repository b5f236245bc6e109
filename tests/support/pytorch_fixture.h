// Reading the values dumped from PyTorch (tests/fixtures/*.json, written by the generate*.py scripts):
// each tensor is {"shape": [...], "data": [...], "dtype": "float64"} (dtype optional: float64); a value
// may be the string "nan", "inf" or "-inf", which JSON has no number for.
#pragma once

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cohort/core/tensor.h"

namespace cohort::testing {

// The parsed fixture file (under tests/fixtures), read once; throws if missing or invalid.
const nlohmann::json& load_fixture(const std::string& file);

DType dtype_named(const std::string& name);

// A contiguous tensor with the entry's dtype, shape and values.
Tensor decode_tensor(const nlohmann::json& entry);

// got against PyTorch's `want`: the same dtype (when the entry names one) and shape, and every value
// within tol * (1 + |want|) (NaN where want is NaN, the same infinity where it is infinite). A failure names `what`, the element, expected and got.
::testing::AssertionResult matches_pytorch(const std::string& what, const Tensor& got, const nlohmann::json& want,
                                           double tol = 1e-10);

// The largest |a - b| over all elements, compared in float64 (autograd ignored).
inline double max_abs_diff(const Tensor& a, const Tensor& b) {
  return (a.detach().to(kFloat64) - b.detach().to(kFloat64)).abs().max().item<double>();
}

}  // namespace cohort::testing
