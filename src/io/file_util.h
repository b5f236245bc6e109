// Internal to io/: the atomic writer every save goes through, and a bounds-checked reader.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace cohort::io::detail {

// Note [Atomic writes]
// A save writes "<path>.tmp.<pid>", fsyncs it, renames it over <path> and fsyncs the directory, so a
// reader sees the old file or the new one, never a torn one, even across a power cut. Any failure
// before the rename (an unwritable directory, a full disk, an exception while producing the bytes)
// removes the temp file and throws, leaving the old file untouched; a crash leaves at most a stray
// temp file, which the next save from a process with the same pid overwrites (the trainer deletes
// those of processes that are gone: remove_dead_temp_files in apps/cohort/app/run_dir.h). Two threads of one
// process saving to the same path at once share the temp name: don't.
//
// Note [Output targets]
// A rename replaces whatever has the target's name, so before creating the temp file the writer
// looks at what is there (resolve_output_target). Nothing, or a regular file: the save goes ahead. A
// symlink is followed, as open(2) would follow it, and the regular file it ends at is what the
// temp file is renamed over; the link itself stays a link (a user who links model.onnx into a
// shared folder expects the shared file updated, and a link silently turned into a file would be
// a surprise found much later). Everything else is refused with what it is: a directory, a device
// (as root, renaming over /dev/null would turn the system's null device into a regular file), a
// FIFO, a socket, a dangling symlink, a symlink loop. Writing through such targets is not offered:
// a device or a FIFO cannot be written atomically, and a consumer reading a FIFO would see a torn
// file on any failure half way, which is what the temp file exists to prevent.
class AtomicWriter {
 public:
  // Creates the temp file; `op` ("save_npy") starts every error message.
  AtomicWriter(std::filesystem::path path, std::string op);
  ~AtomicWriter();  // removes the temp file unless commit() succeeded
  AtomicWriter(const AtomicWriter&) = delete;
  AtomicWriter& operator=(const AtomicWriter&) = delete;

  void write(const void* data, size_t nbytes);
  // fsync, close, rename over the destination, fsync the directory.
  void commit();

 private:
  [[noreturn]] void fail(const std::string& what, int err);

  std::filesystem::path path_;    // as the caller named it, for messages
  std::filesystem::path target_;  // the file the rename replaces (path_, or where its symlinks end)
  std::filesystem::path tmp_;
  std::string op_;
  int fd_ = -1;
  bool committed_ = false;
};

// The file a save to `path` replaces (Note [Output targets]): `path` itself when it is a regular file
// or does not exist, the file a symlink ends at; throws "<who> <path> is <what it is>, not a regular
// file; hint: ..." for anything else.
std::filesystem::path resolve_output_target(const std::filesystem::path& path, const std::string& who);

// Reads byte ranges of a file; every failure throws a cohort::Error "<op>: <path>: <what>".
class FileReader {
 public:
  FileReader(std::filesystem::path path, std::string op);
  uint64_t size() const { return size_; }
  // Reads exactly nbytes at offset; a range past the end of the file is an error, never a short read.
  void read(uint64_t offset, void* dst, size_t nbytes);
  [[noreturn]] void fail(const std::string& what) const;

 private:
  std::filesystem::path path_;
  std::string op_;
  std::ifstream in_;
  uint64_t size_ = 0;
};

}  // namespace cohort::io::detail
