// The zip container of PyTorch's files (Note [PyTorch's zip layout] in zip.h): our writer of stored,
// aligned records, and libzip's reader behind bounds on what the archive declares.
#include "io/zip.h"

#include <zip.h>
#include <zlib.h>

#include <algorithm>
#include <utility>

#include "cohort/core/error.h"

namespace cohort::io::detail {

namespace {

constexpr uint64_t kAlignment = 64;
constexpr uint16_t kDosDate = (1 << 5) | 1;  // 1980-01-01: a valid date, the same in every file
constexpr uint32_t kMax32 = 0xFFFFFFFFu;

void le(std::string& out, uint64_t value, int nbytes) {
  for (int i = 0; i < nbytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

uint32_t crc32_of(const void* data, uint64_t nbytes) {
  return static_cast<uint32_t>(crc32_z(crc32_z(0, nullptr, 0), static_cast<const Bytef*>(data), nbytes));
}

}  // namespace

ZipWriter::ZipWriter(ZipSink sink, uint64_t zip64_from) : sink_(std::move(sink)), zip64_from_(zip64_from) {}

void ZipWriter::put(const std::string& bytes) {
  sink_(bytes.data(), bytes.size());
  offset_ += bytes.size();
}

void ZipWriter::add(const std::string& name, const void* data, uint64_t nbytes) {
  COHORT_ASSERT(!finished_ && name.size() < 0xFFFF);
  const bool zip64 = nbytes >= zip64_from_;
  const uint32_t crc = crc32_of(data, nbytes);
  std::string h;
  le(h, 0x04034b50, 4);
  le(h, zip64 ? 45 : 20, 2);  // version needed to extract: 4.5 for zip64
  le(h, 0, 2);                // flags: sizes and CRC are in this header, no data descriptor
  le(h, 0, 2);                // method: stored
  le(h, 0, 2);                // time
  le(h, kDosDate, 2);
  le(h, crc, 4);
  le(h, zip64 ? kMax32 : nbytes, 4);
  le(h, zip64 ? kMax32 : nbytes, 4);
  // The extra field: zip64 sizes if needed, then the "FB" padding that aligns the data.
  std::string extra;
  if (zip64) {
    le(extra, 0x0001, 2);
    le(extra, 16, 2);
    le(extra, nbytes, 8);
    le(extra, nbytes, 8);
  }
  const uint64_t start = offset_ + 30 + name.size() + extra.size() + 4;
  const uint64_t padding = (kAlignment - start % kAlignment) % kAlignment;
  extra += "FB";
  le(extra, padding, 2);
  extra.append(padding, 'Z');
  le(h, name.size(), 2);
  le(h, extra.size(), 2);
  h += name;
  h += extra;
  entries_.push_back({name, crc, nbytes, offset_});
  put(h);
  COHORT_ASSERT(offset_ % kAlignment == 0);
  sink_(data, nbytes);
  offset_ += nbytes;
}

void ZipWriter::finish() {
  COHORT_ASSERT(!finished_);
  finished_ = true;
  const uint64_t cd_offset = offset_;
  for (const Entry& e : entries_) {
    const bool big_size = e.size >= zip64_from_;
    const bool big_offset = e.offset >= zip64_from_;
    std::string extra;
    if (big_size || big_offset) {
      le(extra, 0x0001, 2);
      le(extra, (big_size ? 16 : 0) + (big_offset ? 8 : 0), 2);
      if (big_size) {
        le(extra, e.size, 8);
        le(extra, e.size, 8);
      }
      if (big_offset) le(extra, e.offset, 8);
    }
    const int version = extra.empty() ? 20 : 45;
    std::string c;
    le(c, 0x02014b50, 4);
    le(c, version, 2);  // made by (MS-DOS attributes)
    le(c, version, 2);  // needed
    le(c, 0, 2);
    le(c, 0, 2);
    le(c, 0, 2);
    le(c, kDosDate, 2);
    le(c, e.crc, 4);
    le(c, big_size ? kMax32 : e.size, 4);
    le(c, big_size ? kMax32 : e.size, 4);
    le(c, e.name.size(), 2);
    le(c, extra.size(), 2);
    le(c, 0, 2);  // comment
    le(c, 0, 2);  // disk
    le(c, 0, 2);  // internal attributes
    le(c, 0, 4);  // external attributes
    le(c, big_offset ? kMax32 : e.offset, 4);
    c += e.name;
    c += extra;
    put(c);
  }
  const uint64_t cd_size = offset_ - cd_offset;
  const uint64_t count = entries_.size();
  const bool zip64 = count >= 0xFFFF || cd_offset >= zip64_from_ || cd_size >= zip64_from_;
  std::string end;
  if (zip64) {
    const uint64_t record = offset_;
    le(end, 0x06064b50, 4);
    le(end, 44, 8);  // the size of the rest of this record
    le(end, 45, 2);
    le(end, 45, 2);
    le(end, 0, 4);
    le(end, 0, 4);
    le(end, count, 8);
    le(end, count, 8);
    le(end, cd_size, 8);
    le(end, cd_offset, 8);
    le(end, 0x07064b50, 4);  // the locator
    le(end, 0, 4);
    le(end, record, 8);
    le(end, 1, 4);
  }
  le(end, 0x06054b50, 4);
  le(end, 0, 2);
  le(end, 0, 2);
  le(end, zip64 ? 0xFFFF : count, 2);
  le(end, zip64 ? 0xFFFF : count, 2);
  le(end, zip64 ? kMax32 : cd_size, 4);
  le(end, zip64 ? kMax32 : cd_offset, 4);
  le(end, 0, 2);
  put(end);
}

// ---- reading ------------------------------------------------------------------------------------

namespace {

std::string libzip_message(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string message = zip_error_strerror(&error);
  zip_error_fini(&error);
  return message;
}

}  // namespace

ZipReader::ZipReader(const std::filesystem::path& path, std::string op) : where_(path.string()), op_(std::move(op)) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail("is a directory, not a file");
  const uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) fail("cannot open: " + ec.message());
  archive_size_ = size;
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_file_create(path.c_str(), 0, -1, &error);
  if (!source) {
    const std::string message = zip_error_strerror(&error);
    zip_error_fini(&error);
    fail("cannot open: " + message);
  }
  zip_error_fini(&error);
  open(source);
}

ZipReader::ZipReader(std::shared_ptr<const std::string> bytes, std::string where, std::string op)
    : where_(std::move(where)), op_(std::move(op)), bytes_(std::move(bytes)) {
  archive_size_ = bytes_->size();
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes_->data(), bytes_->size(), 0, &error);
  zip_error_fini(&error);
  if (!source) fail("out of memory opening the archive");
  open(source);
}

void ZipReader::open(void* src) {
  auto* source = static_cast<zip_source_t*>(src);
  zip_error_t error;
  zip_error_init(&error);
  zip_t* z = zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error);
  if (!z) {
    const int code = zip_error_code_zip(&error);
    zip_error_fini(&error);
    zip_source_free(source);
    fail(code == ZIP_ER_NOZIP ? "not a zip archive (PyTorch's format since 1.6 is one; is the file truncated?)"
                              : "not a valid zip archive: " + libzip_message(code));
  }
  zip_error_fini(&error);
  zip_ = z;
  const zip_int64_t n = zip_get_num_entries(z, 0);
  for (zip_int64_t i = 0; i < n; ++i) {
    const char* name = zip_get_name(z, static_cast<zip_uint64_t>(i), ZIP_FL_ENC_RAW);
    if (!name) fail("record " + std::to_string(i) + " has no readable name");
    names_.emplace_back(name);
  }
}

ZipReader::~ZipReader() {
  if (zip_) zip_discard(static_cast<zip_t*>(zip_));
}

int64_t ZipReader::index_of(const std::string& name) const {
  return zip_name_locate(static_cast<zip_t*>(zip_), name.c_str(), ZIP_FL_ENC_RAW);
}

std::optional<uint64_t> ZipReader::size(const std::string& name) const {
  const int64_t index = index_of(name);
  if (index < 0) return std::nullopt;
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(static_cast<zip_t*>(zip_), static_cast<zip_uint64_t>(index), 0, &st) != 0)
    fail("cannot read the directory entry of record '" + name + "'");
  const zip_uint64_t needed = ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
  if ((st.valid & needed) != needed) fail("record '" + name + "' has no size in the directory");
  if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE)
    fail("record '" + name + "' is encrypted");
  // Sizes the archive cannot hold are refused before anyone allocates them: a stored record is its
  // bytes, and deflate expands at most about 1032 to 1.
  const bool plausible = st.comp_size <= archive_size_ &&
                         (st.comp_method == ZIP_CM_STORE ? st.size == st.comp_size
                                                         : st.size / 1032 <= st.comp_size + 1);
  if (!plausible)
    fail("record '" + name + "' declares " + std::to_string(st.size) + " bytes (" + std::to_string(st.comp_size) +
         " compressed) in a " + std::to_string(archive_size_) + "-byte archive (corrupt or truncated)");
  const uint64_t allowance = kMaxInflation * archive_size_;
  if (st.comp_method != ZIP_CM_STORE && (inflated_ > allowance || st.size > allowance - inflated_))
    fail("record '" + name + "' inflates to " + std::to_string(st.size) + " bytes from " + std::to_string(st.comp_size) +
         (inflated_ ? " (after " + std::to_string(inflated_) + " inflated by earlier records)" : std::string()) +
         ", more than " + std::to_string(kMaxInflation) + " times the " + std::to_string(archive_size_) +
         "-byte archive; torch.save never compresses records, and tensors barely compress (a crafted file?); "
         "hint: save it again with torch.save");
  return st.size;
}

void ZipReader::read(const std::string& name, void* dst, uint64_t nbytes) {
  const std::optional<uint64_t> n = size(name);
  if (!n) fail("no record '" + name + "'");
  if (*n != nbytes)
    fail("record '" + name + "' has " + std::to_string(*n) + " bytes, expected " + std::to_string(nbytes));
  zip_file_t* file = zip_fopen_index(static_cast<zip_t*>(zip_), static_cast<zip_uint64_t>(index_of(name)), 0);
  if (!file) fail("cannot open record '" + name + "': " + zip_strerror(static_cast<zip_t*>(zip_)));
  std::string problem;
  char* out = static_cast<char*>(dst);
  uint64_t done = 0;
  while (done < nbytes) {
    const zip_int64_t got = zip_fread(file, out + done, nbytes - done);
    if (got <= 0) {
      problem = got < 0 ? zip_file_strerror(file) : "it ends early";
      break;
    }
    done += static_cast<uint64_t>(got);
  }
  if (problem.empty()) {
    // One more read reaches the end of the record, where libzip verifies the CRC-32.
    char extra;
    const zip_int64_t got = zip_fread(file, &extra, 1);
    if (got < 0) problem = zip_file_strerror(file);
    else if (got > 0) problem = "it holds more bytes than its directory entry says";
  }
  zip_fclose(file);
  if (!problem.empty()) fail("record '" + name + "' is corrupt: " + problem);
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(static_cast<zip_t*>(zip_), static_cast<zip_uint64_t>(index_of(name)), 0, &st) == 0 &&
      st.comp_method != ZIP_CM_STORE)
    inflated_ += nbytes;
}

std::string ZipReader::read(const std::string& name) {
  const std::optional<uint64_t> n = size(name);
  if (!n) fail("no record '" + name + "'");
  std::string bytes(*n, '\0');
  read(name, bytes.data(), bytes.size());
  return bytes;
}

void ZipReader::fail(const std::string& what) const { throw Error(op_ + ": " + where_ + ": " + what); }

}  // namespace cohort::io::detail
