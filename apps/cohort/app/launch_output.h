// The launcher's output relay (Note [Launch: processes, signals and output] in launch.cpp): one
// rank's stream cut into whole lines, each written with the rank's prefix in one piece.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>

namespace cohort::app::launch_detail {

// Cuts one stream's bytes into lines (and '\r'-ended segments, for progress bars) and writes each
// to `sink` as prefix + line, in one write, so lines of different ranks never mix. A line longer
// than max_line bytes is split into several prefixed lines; a bare "\r" is dropped.
class LinePrefixer {
 public:
  LinePrefixer(std::string prefix, std::ostream& sink, std::size_t max_line);

  void feed(const char* data, std::size_t n);
  // End of stream: a partial last line still gets its prefix, and a newline.
  void finish();

 private:
  void emit(const char* end);

  std::string prefix_, line_;
  std::ostream& sink_;
  std::size_t max_line_;
};

}  // namespace cohort::app::launch_detail
