// io::write_file: the public face of the atomic writer.
#include "cohort/io/file.h"

#include "io/file_util.h"

namespace cohort::io {

void write_file(const std::filesystem::path& path, std::string_view bytes) {
  detail::AtomicWriter writer(path, "write_file");
  writer.write(bytes.data(), bytes.size());
  writer.commit();
}

void check_output_file(const std::filesystem::path& path, std::string_view who) {
  detail::resolve_output_target(path, std::string(who));
}

}  // namespace cohort::io
