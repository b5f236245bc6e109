// Internal to io/: the zip container of PyTorch's files (torch_file.cpp), a writer of stored,
// 64-byte-aligned records and a checked reader.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cohort::io::detail {

// Note [PyTorch's zip layout]
// Since PyTorch 1.6, torch.save writes a zip archive whose records are STORED (not compressed) and
// whose data starts at a multiple of 64 bytes in the file, so that a reader may map a tensor's bytes
// straight from disk. PyTorch's writer (miniz) gets the alignment by padding each local header with
// an extra field of id "FB" filled with 'Z's; readers ignore that field.
//
// The writer here is our own, not libzip's: libzip 1.7 decides where each record's data lands only
// when the archive is closed and has no way to ask for an alignment (padding through extra fields
// would mean predicting its header layout), and it writes through its own unsynced temp file or an
// in-memory copy of the whole archive, where every save must go through Note [Atomic writes]
// straight from the tensors' memory. Writing stored records is small: a local header with the CRC-32
// (zlib's) and sizes known up front (so no data descriptors), the bytes, a central directory, and
// the zip64 records once a record or an offset passes 4 GiB.
//
// The reader is libzip's (zip_open with ZIP_CHECKCONS): a widely fuzzed parser of the central
// directory, zip64, compressed records (an archive re-zipped by another tool still loads) and CRC-32
// verification; ZipReader adds bounds on the sizes it declares before anything is allocated. torch.save
// never compresses, so compressed records only come from archives re-zipped by another tool (data
// that barely compresses, floats) or crafted ones (deflate inflates up to ~1030 to 1): all of an
// archive's compressed records together may inflate to at most kMaxInflation times its size.

// Appends bytes to the output: AtomicWriter::write or an std::ostream.
using ZipSink = std::function<void(const void* data, size_t nbytes)>;

class ZipWriter {
 public:
  // zip64_from: records and offsets at or past this many bytes use zip64 fields (tests lower it).
  explicit ZipWriter(ZipSink sink, uint64_t zip64_from = 0xFFFFFFFFu);
  // Adds one stored record; its data starts at a multiple of 64 bytes from the archive's start.
  void add(const std::string& name, const void* data, uint64_t nbytes);
  // Writes the central directory and the end records; nothing may be added afterwards.
  void finish();

 private:
  struct Entry {
    std::string name;
    uint32_t crc;
    uint64_t size;
    uint64_t offset;  // of the local header
  };
  void put(const std::string& bytes);
  ZipSink sink_;
  uint64_t zip64_from_;
  uint64_t offset_ = 0;
  std::vector<Entry> entries_;
  bool finished_ = false;
};

// Reads records of an archive in a file or in memory. Every failure, and every record that is
// missing, corrupt (CRC-32) or implausibly large, throws a cohort::Error "<op>: <where>: <what>".
class ZipReader {
 public:
  ZipReader(const std::filesystem::path& path, std::string op);
  // `bytes` must outlive the reader; `where` names it in messages ("<stream>").
  ZipReader(std::shared_ptr<const std::string> bytes, std::string where, std::string op);
  ~ZipReader();
  ZipReader(const ZipReader&) = delete;
  ZipReader& operator=(const ZipReader&) = delete;

  // Record names in archive order.
  const std::vector<std::string>& names() const { return names_; }
  // The uncompressed size of a record, or nullopt when there is none of that name. A compressed
  // record that would take the archive's inflated bytes past kMaxInflation times its size is an error.
  std::optional<uint64_t> size(const std::string& name) const;
  uint64_t archive_size() const { return archive_size_; }
  static constexpr uint64_t kMaxInflation = 16;
  // Reads a whole record (exactly size(name) bytes) into dst and verifies its CRC-32.
  void read(const std::string& name, void* dst, uint64_t nbytes);
  std::string read(const std::string& name);
  [[noreturn]] void fail(const std::string& what) const;

 private:
  void open(void* source);  // a zip_source_t*
  int64_t index_of(const std::string& name) const;

  std::string where_;
  std::string op_;
  std::shared_ptr<const std::string> bytes_;
  uint64_t archive_size_ = 0;
  uint64_t inflated_ = 0;  // bytes read so far from compressed records
  void* zip_ = nullptr;    // a zip_t*
  std::vector<std::string> names_;
};

}  // namespace cohort::io::detail
