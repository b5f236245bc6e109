// The build's paths, given to this file alone as compile definitions (see paths.h).
#include "support/paths.h"

#include <stdexcept>

namespace cohort::testing {

const std::string& fixtures_dir() {
  static const std::string dir = COHORT_FIXTURES_DIR;
  return dir;
}

const std::string& cohort_binary() {
#ifdef COHORT_BINARY
  static const std::string binary = COHORT_BINARY;
  return binary;
#else
  throw std::logic_error("tests: this build has no `cohort` program (COHORT_BUILD_APPS=OFF)");
#endif
}

const std::string& ddp_worker() {
  static const std::string binary = COHORT_DDP_WORKER;
  return binary;
}

}  // namespace cohort::testing
