// Writing a whole file atomically: readers see the old contents or the new, never a torn file
// (Note [Atomic writes] in src/io/file_util.h).
//
//   io::write_file("run/eval.json", json_text);
#pragma once

#include <filesystem>
#include <string_view>

namespace cohort::io {

// Throws a cohort::Error naming the path when the file cannot be written; the old file survives.
// A symlink is followed and the file it names replaced (the link stays); a target that is not a
// regular file (a directory, a device such as /dev/null, a FIFO, a socket, a dangling or looping
// symlink) is refused, as by check_output_file.
void write_file(const std::filesystem::path& path, std::string_view bytes);

// Throws a cohort::Error "<who> <path> is a character device, not a regular file; ..." when an
// atomic save to `path` would have to replace something other than a regular file (Note [Output
// targets] in src/io/file_util.h). A path that does not exist yet passes. For programs that want to
// refuse a bad output flag before doing the work:
//   io::check_output_file(options.onnx, "cohort export: --onnx");
void check_output_file(const std::filesystem::path& path, std::string_view who);

}  // namespace cohort::io
