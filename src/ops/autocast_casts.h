// What an op with an autocast policy calls on entry (the policy itself: cohort/ops/autocast.h):
//
//   Tensor mm(const Tensor& a, const Tensor& b) {
//     if (autocast::active()) {
//       autocast::CastOpScope cast;  // the ops mm is made of run as called
//       return mm(autocast::to_lower(a), autocast::to_lower(b));
//     }
//     ...
#pragma once

#include "cohort/core/tensor.h"
#include "cohort/ops/autocast.h"

namespace cohort::autocast {

// Autocast is enabled on this thread and no enclosing op has cast its inputs already.
bool active();

// Marks the scope of an op that cast its inputs.
class CastOpScope {
 public:
  CastOpScope();
  ~CastOpScope();
  CastOpScope(const CastOpScope&) = delete;
  CastOpScope& operator=(const CastOpScope&) = delete;

 private:
  bool previous_;
};

// A floating tensor other than float64 in the autocast dtype (float32 leaves that require grad
// through the region's cache); anything else (undefined, integer, float64) unchanged.
Tensor to_lower(const Tensor& t);
// A floating tensor other than float64 in float32; anything else unchanged.
Tensor to_float32(const Tensor& t);

}  // namespace cohort::autocast
