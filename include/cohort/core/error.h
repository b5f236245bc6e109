// Errors: every misuse of the API throws a cohort::Error whose message reads
// "<op>: <what is wrong>, got <values>[; hint: <fix>]".
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace cohort {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
  // libtorch's c10::Error spellings of the message (cohort's carries no backtrace).
  std::string msg() const { return what(); }
  const char* what_without_backtrace() const noexcept { return what(); }
};

// An index or dimension out of range.
class IndexError : public Error {
 public:
  using Error::Error;
};

// A dtype that an op does not accept, or a result type that cannot be cast.
class TypeError : public Error {
 public:
  using Error::Error;
};

// Tensors on different devices, or a device that does not exist.
class DeviceError : public Error {
 public:
  using Error::Error;
};

// Misuse of autograd: a second backward, an in-place change of a saved tensor, ...
class AutogradError : public Error {
 public:
  using Error::Error;
};

// An allocation the machine cannot satisfy.
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

// `text` made safe to quote in a message: a file's tensor names, metadata or paths could otherwise
// drive the terminal that prints it. Control characters become \n, \t, \r or \xNN, as do DEL and
// every byte that is not part of valid UTF-8; printable ASCII (a backslash too, so escaping twice
// changes nothing) and valid UTF-8 stay. With keep_newlines, '\n' stays a line break (for whole
// messages that span lines).
//   escape_text("a\x1b[2Jb") == "a\\x1b[2Jb"
std::string escape_text(std::string_view text, bool keep_newlines = false);

namespace detail {
template <class... Args>
std::string str(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}
[[noreturn]] void internal_assert_fail(const char* cond, const char* file, int line);
}  // namespace detail

}  // namespace cohort

// Throws ErrorType with the concatenated message when cond is false.
#define COHORT_CHECK_AS(ErrorType, cond, ...)                          \
  do {                                                                 \
    if (!(cond)) [[unlikely]]                                          \
      throw ErrorType(::cohort::detail::str(__VA_ARGS__));             \
  } while (0)

#define COHORT_CHECK(cond, ...) COHORT_CHECK_AS(::cohort::Error, cond, __VA_ARGS__)

// An internal invariant: failing it is a bug in cohort, not a user error.
#define COHORT_ASSERT(cond)                                                        \
  do {                                                                             \
    if (!(cond)) [[unlikely]]                                                      \
      ::cohort::detail::internal_assert_fail(#cond, __FILE__, __LINE__);           \
  } while (0)
