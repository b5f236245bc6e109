// LinePrefixer: whole prefixed lines out of a rank's byte stream.
#include "app/launch_output.h"

#include <algorithm>
#include <ostream>
#include <utility>

namespace cohort::app::launch_detail {

LinePrefixer::LinePrefixer(std::string prefix, std::ostream& sink, std::size_t max_line)
    : prefix_(std::move(prefix)), sink_(sink), max_line_(std::max<std::size_t>(max_line, 1)) {}

void LinePrefixer::feed(const char* data, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const char c = data[i];
    if (c != '\n' && !line_.empty() && line_.back() == '\r') emit("");  // a '\r' segment ends
    line_.push_back(c);
    if (c == '\n') emit("");
    else if (line_.size() >= max_line_) emit("\n");
  }
  sink_.flush();
}

void LinePrefixer::finish() {
  if (!line_.empty()) emit("\n");
  sink_.flush();
}

void LinePrefixer::emit(const char* end) {
  if (line_.find_first_not_of('\r') != std::string::npos) {  // a bare "\r" is no segment
    std::string piece;
    piece.reserve(prefix_.size() + line_.size() + 1);
    piece.append(prefix_).append(line_).append(end);
    sink_.write(piece.data(), static_cast<std::streamsize>(piece.size()));
  }
  line_.clear();
}

}  // namespace cohort::app::launch_detail
