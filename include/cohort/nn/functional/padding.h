// Padding (nn::functional, spelled as libtorch's torch::nn::functional::pad):
//   F::pad(x, F::PadFuncOptions({1, 1, 2, 2}).mode(torch::kReflect))   // W by 1 each side, H by 2
//   F::pad(x, F::PadFuncOptions({0, 3}).value(-1))                     // constant (the default mode)
// pad lists (before, after) pairs from the last dim; the options resolve to cohort::pad
// (cohort/ops/padding.h), whose header gives the shapes, the gradients and the errors.
#pragma once

#include <variant>
#include <vector>

#include "cohort/core/enum.h"
#include "cohort/core/tensor.h"

namespace cohort::nn::functional {

struct PadFuncOptions {
  using mode_t = std::variant<enumtype::kConstant, enumtype::kReflect, enumtype::kReplicate, enumtype::kCircular>;

  PadFuncOptions(std::vector<int64_t> pad) : pad_(std::move(pad)) {}  // NOLINT: implicit like libtorch
  PadFuncOptions& pad(std::vector<int64_t> p) { pad_ = std::move(p); return *this; }
  PadFuncOptions& mode(mode_t m) { mode_ = m; return *this; }
  PadFuncOptions& value(double v) { value_ = v; return *this; }
  const std::vector<int64_t>& pad() const { return pad_; }
  const mode_t& mode() const { return mode_; }
  double value() const { return value_; }

 private:
  std::vector<int64_t> pad_;
  mode_t mode_ = enumtype::kConstant{};
  double value_ = 0;
};

Tensor pad(const Tensor& input, const PadFuncOptions& options);

}  // namespace cohort::nn::functional
