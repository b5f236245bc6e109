// Internal to data/: reads a whole dataset file into memory, inflating it when its name ends in .gz,
// and finds a file that may exist plain or gzipped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cohort::data::detail {

// The bytes of `path` (decompressed when the name ends in ".gz"). Every failure throws a
// cohort::Error "<op>: <path>: <what is wrong>": a missing or unreadable file, one that is not a
// regular file (said what it is: a directory, a FIFO, a device, a symlink loop; a FIFO is never opened
// for a blocking read), a .gz file that is not gzip, corrupt or truncated compressed data, bytes after
// the last gzip member, data that inflates past 64 times the file's size plus 16 MiB (a gzip bomb).
std::vector<uint8_t> read_file(const std::string& path, const std::string& op);

// `path` if it is a regular file, else `path + ".gz"` if that is one, else whichever of the two names
// something else (a directory, a FIFO, a broken symlink: read_file then says what it is), else
// nothing. The plain file wins when both exist: it loads without inflating.
std::optional<std::string> find_plain_or_gz(const std::string& path);

// Throws a cohort::Error "<op>: <path>: <what>".
[[noreturn]] void fail(const std::string& op, const std::string& path, const std::string& what);

}  // namespace cohort::data::detail
