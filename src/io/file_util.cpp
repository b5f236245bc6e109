// The atomic writer (Note [Atomic writes]) and the checked reader shared by safetensors and .npy.
#include "io/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "cohort/core/error.h"

namespace cohort::io::detail {

namespace {

// "a character device", "a FIFO", ... for a stat'ed thing that is not a regular file.
const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

}  // namespace

std::filesystem::path resolve_output_target(const std::filesystem::path& path, const std::string& who) {
  auto refuse = [&](const std::string& what, const std::string& hint) {
    throw Error(cohort::detail::str(who, " ", escape_text(path.string()), " ", what, "; hint: ", hint));
  };
  const std::string replace_hint =
      "a save writes a temporary file and renames it over its target, which would replace it; name a regular file";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    struct stat lst {};
    if (err == ELOOP) refuse("is a symbolic link loop, not a regular file", "remove the link or point it at a file");
    if (err == ENOENT && ::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
      std::error_code ec;
      const std::filesystem::path to = std::filesystem::read_symlink(path, ec);
      refuse("is a symbolic link to " + escape_text(to.string()) + ", which does not exist",
             "create the file it names first, or remove the link");
    }
    // A new file, or a path open() will report better (a missing directory, no permission).
    return path;
  }
  if (!S_ISREG(st.st_mode)) {
    struct stat lst {};
    const bool link = ::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode);
    refuse(std::string(link ? "is a symbolic link to " : "is ") + kind_of(st.st_mode) + ", not a regular file",
           replace_hint);
  }
  struct stat lst {};
  if (::lstat(path.c_str(), &lst) == 0 && !S_ISLNK(lst.st_mode)) return path;
  // A symlink to a regular file: the rename replaces the file, not the link.
  std::error_code ec;
  std::filesystem::path target = std::filesystem::canonical(path, ec);
  if (ec) refuse("is a symbolic link that cannot be resolved (" + ec.message() + ")", "name the file itself");
  return target;
}

AtomicWriter::AtomicWriter(std::filesystem::path path, std::string op)
    : path_(std::move(path)), op_(std::move(op)) {
  target_ = resolve_output_target(path_, op_ + ":");
  tmp_ = target_;
  tmp_ += ".tmp." + std::to_string(::getpid());
  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd_ < 0) {
    const int err = errno;
    throw Error(cohort::detail::str(op_, ": cannot create '", tmp_.string(), "': ", std::strerror(err),
                                    "; hint: does the directory exist and is it writable?"));
  }
}

AtomicWriter::~AtomicWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(tmp_.c_str());
}

void AtomicWriter::fail(const std::string& what, int err) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  ::unlink(tmp_.c_str());
  throw Error(cohort::detail::str(op_, ": cannot write '", path_.string(), "': ", what, " failed: ", std::strerror(err),
                                  " (the previous file, if any, is unchanged)"));
}

void AtomicWriter::write(const void* data, size_t nbytes) {
  const char* p = static_cast<const char*>(data);
  while (nbytes > 0) {
    const ssize_t n = ::write(fd_, p, nbytes);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("write", errno);
    }
    p += n;
    nbytes -= static_cast<size_t>(n);
  }
}

void AtomicWriter::commit() {
  if (::fsync(fd_) != 0) fail("fsync", errno);
  const int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0) fail("close", errno);
  if (::rename(tmp_.c_str(), target_.c_str()) != 0) fail("rename of '" + tmp_.string() + "'", errno);
  committed_ = true;
  // Make the rename itself durable.
  std::filesystem::path dir = target_.parent_path();
  if (dir.empty()) dir = ".";
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd < 0 || ::fsync(dfd) != 0) {
    const int err = errno;
    if (dfd >= 0) ::close(dfd);
    throw Error(cohort::detail::str(op_, ": wrote '", path_.string(), "' but could not fsync its directory: ",
                                    std::strerror(err)));
  }
  ::close(dfd);
}

FileReader::FileReader(std::filesystem::path path, std::string op) : path_(std::move(path)), op_(std::move(op)) {
  // The type first: opening a FIFO would block, and reading /dev/zero would never end.
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) {
    const int err = errno;
    if (err == ENOENT) fail("cannot open: the file does not exist");
    if (err == ELOOP) fail("too many levels of symbolic links (a symlink loop?)");
    fail(std::string("cannot open: ") + std::strerror(err));
  }
  if (S_ISDIR(st.st_mode)) fail("is a directory, not a file");
  if (S_ISFIFO(st.st_mode)) fail("is a FIFO, not a regular file");
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) fail("is a device, not a regular file");
  if (!S_ISREG(st.st_mode)) fail("is not a regular file");
  in_.open(path_, std::ios::binary);
  if (!in_) fail(std::string("cannot open: ") + std::strerror(errno));
  in_.seekg(0, std::ios::end);
  const std::streamoff end = in_.tellg();
  if (end < 0) fail("cannot determine the file size");
  size_ = static_cast<uint64_t>(end);
}

void FileReader::read(uint64_t offset, void* dst, size_t nbytes) {
  if (offset > size_ || nbytes > size_ - offset)
    fail(cohort::detail::str("reading ", nbytes, " bytes at offset ", offset, " runs past the end of the file (",
                             size_, " bytes)"));
  if (nbytes == 0) return;
  in_.clear();
  in_.seekg(static_cast<std::streamoff>(offset));
  in_.read(static_cast<char*>(dst), static_cast<std::streamsize>(nbytes));
  if (!in_ || in_.gcount() != static_cast<std::streamsize>(nbytes))
    fail(cohort::detail::str("read error at offset ", offset, " (the file changed while reading?)"));
}

void FileReader::fail(const std::string& what) const {
  // `what` often quotes the file (a tensor name, a dtype, metadata): escaped, it cannot drive a terminal.
  throw Error(cohort::detail::str(op_, ": ", escape_text(path_.string()), ": ", escape_text(what)));
}

}  // namespace cohort::io::detail
