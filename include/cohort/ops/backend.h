// What the compute backends are: for `cohort info` and bug reports.
#pragma once

#include <string>

namespace cohort {

struct BackendInfo {
  std::string onednn_version;  // "2.6.3"
  std::string cpu_isa;         // the instruction set oneDNN dispatches to: "avx512_core", "avx2", ...
  std::string openmp;          // the OpenMP version the library was built with: "201511"
};

BackendInfo backend_info();

}  // namespace cohort
