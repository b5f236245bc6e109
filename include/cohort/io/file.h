// Writing a whole file atomically: readers see the old contents or the new, never a torn file
// (Note [Atomic writes] in src/io/file_util.h).
//
//   io::write_file("run/eval.json", json_text);
#pragma once

#include <filesystem>
#include <string_view>

namespace cohort::io {

// Throws a cohort::Error naming the path when the file cannot be written; the old file survives.
void write_file(const std::filesystem::path& path, std::string_view bytes);

}  // namespace cohort::io
