// Numbers and tuples as Python's repr prints them, for the modules' printing (PyTorch's reprs).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cohort::nn::detail {

// The common cases of a float's repr, to 6 significant digits: 1e-05, 0.1, 1.0 (a whole number gets ".0").
std::string python_float(double v);
// A float's repr exactly: the shortest digits that read back as v (1/3 prints 0.3333333333333333).
std::string python_repr(double v);
// A tuple of integers: (5,) or (1, 1, 2, 2).
std::string python_tuple(const std::vector<int64_t>& values);

}  // namespace cohort::nn::detail
