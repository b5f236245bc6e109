// Random draws for the data transforms, built from Generator::next_u64 alone (not std:: distributions,
// whose output differs between standard libraries), so a seed gives the same crops everywhere.
#pragma once

#include <cstdint>

#include "cohort/core/generator.h"

namespace cohort::data::transforms::detail {

inline int64_t draw_below(Generator& gen, int64_t n) {  // uniform in [0, n), n >= 1
  return static_cast<int64_t>((static_cast<unsigned __int128>(gen.next_u64()) * static_cast<uint64_t>(n)) >> 64);
}
inline double draw_unit(Generator& gen) { return static_cast<double>(gen.next_u64() >> 11) * 0x1.0p-53; }  // [0, 1)
inline double draw_uniform(Generator& gen, double lo, double hi) { return lo + (hi - lo) * draw_unit(gen); }

}  // namespace cohort::data::transforms::detail
