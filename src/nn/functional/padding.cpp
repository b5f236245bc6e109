// F::pad: PadFuncOptions resolved to cohort::pad's mode names.
#include "cohort/nn/functional/padding.h"

#include "cohort/ops/padding.h"

namespace cohort::nn::functional {

namespace {

const char* mode_name(const PadFuncOptions::mode_t& mode) {
  static const char* const names[] = {"constant", "reflect", "replicate", "circular"};
  return names[mode.index()];
}

}  // namespace

// A value with a mode other than constant is refused by cohort::pad unless it is 0, the default.
Tensor pad(const Tensor& input, const PadFuncOptions& options) {
  return cohort::pad(input, options.pad(), mode_name(options.mode()), options.value());
}

}  // namespace cohort::nn::functional
