// Reading the kernel's small text files (/proc, /sys/fs/cgroup) whole (not public API).
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace cohort::detail {

// The whole text of `path`; "" when it cannot be read (a file the kernel does not have here).
inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace cohort::detail
