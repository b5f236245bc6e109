// The process-wide default generator.
#include "cohort/core/generator.h"

namespace cohort {

Generator& default_generator() {
  static Generator gen(0);
  return gen;
}

void manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> l(default_generator().mutex());
  default_generator().manual_seed(seed);
}

}  // namespace cohort
