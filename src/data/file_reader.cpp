// Whole-file reads for the dataset readers: plain files in one read, .gz files inflated with zlib
// into one buffer sized from the gzip trailer, so a reader parses bytes and never deals with streams.
#include "data/file_reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "cohort/core/error.h"

namespace cohort::data::detail {

namespace fs = std::filesystem;

void fail(const std::string& op, const std::string& path, const std::string& what) {
  // Escaped: a path or a message quoting a file's bytes could otherwise drive the terminal.
  throw Error(op + ": " + escape_text(path) + ": " + escape_text(what));
}

namespace {

// What is wrong with `st` as a data file: "" for a regular file, else what it is.
std::string not_regular(const struct stat& st) {
  if (S_ISREG(st.st_mode)) return "";
  if (S_ISDIR(st.st_mode)) return "is a directory, expected a file";
  if (S_ISFIFO(st.st_mode)) return "is a FIFO, not a regular file";
  if (S_ISCHR(st.st_mode)) return "is a character device, not a regular file";
  if (S_ISBLK(st.st_mode)) return "is a block device, not a regular file";
  if (S_ISSOCK(st.st_mode)) return "is a socket, not a regular file";
  return "is not a regular file";
}

// Closes the descriptor on every exit path, throws included.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

std::vector<uint8_t> read_plain(const std::string& path, const std::string& op) {
  // The type first: a FIFO would block the open (and a read of /dev/zero never ends), and "does not
  // exist" would be wrong about a directory, a device or a symlink loop.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    struct stat link {};
    if (err == ENOENT && ::lstat(path.c_str(), &link) == 0)
      fail(op, path, "is a symbolic link to a file that does not exist");
    if (err == ENOENT) fail(op, path, "the file does not exist");
    if (err == ELOOP) fail(op, path, "too many levels of symbolic links (a symlink loop?)");
    fail(op, path, std::string("cannot read the file (") + std::strerror(err) + ")");
  }
  if (std::string what = not_regular(st); !what.empty()) fail(op, path, what);
  // O_NONBLOCK and fstat: should the file be swapped for a FIFO after the stat, the open still returns
  // and the check still refuses it.
  Fd file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (file.fd < 0) fail(op, path, std::string("cannot open the file (") + std::strerror(errno) + ")");
  if (::fstat(file.fd, &st) != 0) fail(op, path, std::string("cannot read the file (") + std::strerror(errno) + ")");
  if (std::string what = not_regular(st); !what.empty()) fail(op, path, what);
  const size_t size = static_cast<size_t>(st.st_size);
  std::vector<uint8_t> bytes(size);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(file.fd, bytes.data() + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      fail(op, path, "reading the file failed after " + std::to_string(done) + " of " + std::to_string(size) +
                         " bytes" + (n < 0 ? std::string(" (") + std::strerror(errno) + ")" : std::string(" (it shrank)")));
    done += static_cast<size_t>(n);
  }
  return bytes;
}

// Frees zlib's state on every exit path, including throws.
struct Inflater {
  z_stream s{};
  bool ready = false;
  ~Inflater() {
    if (ready) inflateEnd(&s);
  }
};

// Real datasets inflate a few times (MNIST's images 5 to 1); deflate can inflate 1000 to 1, so a 1 MB
// file could ask for a gigabyte. Past this many times the file's size (plus a floor for small files)
// the data is refused before the buffer grows further.
constexpr size_t kMaxGzipInflation = 64;
constexpr size_t kGzipInflationFloor = size_t{16} << 20;

std::vector<uint8_t> inflate_gzip(const std::vector<uint8_t>& in, const std::string& path, const std::string& op) {
  if (in.size() < 2 || in[0] != 0x1f || in[1] != 0x8b)
    fail(op, path, "the name ends in .gz but the file is not gzip data (it does not start with the bytes 1f 8b)");
  if (in.size() < 18)
    fail(op, path, "the gzip data is truncated: " + std::to_string(in.size()) +
                       " bytes is shorter than a gzip header and trailer");
  // The trailer's ISIZE is the uncompressed size mod 2^32 (of the last member): a good first guess,
  // but capped, because in a truncated or corrupt file those bytes are garbage and could ask for 4 GiB.
  // Data that compresses better than the cap allows simply grows the buffer by doubling.
  const size_t n = in.size();
  const size_t isize = size_t{in[n - 4]} | size_t{in[n - 3]} << 8 | size_t{in[n - 2]} << 16 | size_t{in[n - 1]} << 24;
  const size_t cap = kMaxGzipInflation * n + kGzipInflationFloor;
  std::vector<uint8_t> out(std::min(std::max<size_t>(isize, 1024), 8 * n + 4096));

  Inflater z;
  if (inflateInit2(&z.s, 16 + MAX_WBITS) != Z_OK) fail(op, path, "zlib could not start inflating");
  z.ready = true;
  size_t in_pos = 0, out_pos = 0;
  for (;;) {
    if (out_pos == out.size()) {
      if (out.size() >= cap)
        fail(op, path, "the gzip data inflates to more than " + std::to_string(cap) + " bytes (" +
                           std::to_string(kMaxGzipInflation) + " times the file's " + std::to_string(n) +
                           " bytes, and " + std::to_string(kGzipInflationFloor >> 20) +
                           " MiB), which no dataset does (a crafted file?); hint: if it is real, decompress it "
                           "with gunzip and give the plain file");
      out.resize(std::min(out.size() * 2, cap));
    }
    // avail_in/avail_out are 32-bit: feed at most 1 GiB at a time.
    const size_t in_chunk = std::min<size_t>(n - in_pos, size_t{1} << 30);
    const size_t out_chunk = std::min<size_t>(out.size() - out_pos, size_t{1} << 30);
    z.s.next_in = const_cast<Bytef*>(in.data() + in_pos);
    z.s.avail_in = static_cast<uInt>(in_chunk);
    z.s.next_out = out.data() + out_pos;
    z.s.avail_out = static_cast<uInt>(out_chunk);
    const int ret = inflate(&z.s, Z_NO_FLUSH);
    in_pos += in_chunk - z.s.avail_in;
    out_pos += out_chunk - z.s.avail_out;
    if (ret == Z_STREAM_END) {
      if (in_pos == n) break;
      // gzip allows several members back to back (cat a.gz b.gz); anything else is garbage.
      if (n - in_pos < 2 || in[in_pos] != 0x1f || in[in_pos + 1] != 0x8b)
        fail(op, path, "corrupt gzip file: " + std::to_string(n - in_pos) +
                           " bytes of trailing data after the gzip stream");
      inflateReset(&z.s);
      continue;
    }
    if (ret == Z_DATA_ERROR || ret == Z_NEED_DICT || ret == Z_STREAM_ERROR)
      fail(op, path, std::string("corrupt gzip data (zlib: ") + (z.s.msg ? z.s.msg : "invalid data") + ")");
    if (ret == Z_MEM_ERROR) fail(op, path, "out of memory while inflating");
    // Z_OK or Z_BUF_ERROR: more output space helps; with all input consumed, the stream was cut short.
    if (in_pos == n && out_pos < out.size())
      fail(op, path, "the gzip data is truncated (it ends after " + std::to_string(n) +
                         " bytes, before the end of the compressed stream)");
  }
  out.resize(out_pos);
  return out;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::vector<uint8_t> read_file(const std::string& path, const std::string& op) {
  std::vector<uint8_t> bytes = read_plain(path, op);
  if (ends_with(path, ".gz")) return inflate_gzip(bytes, path, op);
  return bytes;
}

std::optional<std::string> find_plain_or_gz(const std::string& path) {
  std::error_code ec;
  if (fs::is_regular_file(path, ec)) return path;
  if (fs::is_regular_file(path + ".gz", ec)) return path + ".gz";
  // Something that is not a regular file (a directory, a FIFO, a device, a broken or looping
  // symlink): read_file says what it is, rather than the caller saying it does not exist.
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) return path;
  if (::lstat((path + ".gz").c_str(), &st) == 0) return path + ".gz";
  return std::nullopt;
}

}  // namespace cohort::data::detail
