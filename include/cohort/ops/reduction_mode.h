// How a per-sample quantity becomes one value, as libtorch spells it: kMean (default), kSum, kNone.
// Used by the losses (ops/loss.h, nn/functional/loss.h) and by parallel::gather for 0-d replica outputs.
#pragma once

namespace cohort {

enum class Reduction { None, Mean, Sum };
inline constexpr Reduction kNone = Reduction::None;
inline constexpr Reduction kMean = Reduction::Mean;
inline constexpr Reduction kSum = Reduction::Sum;

}  // namespace cohort
