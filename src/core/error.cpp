// Internal-assert failures and the printers of the small core types.
#include "cohort/core/error.h"

#include <ostream>

#include "cohort/core/array_ref.h"
#include "cohort/core/scalar.h"

namespace cohort {

namespace detail {
void internal_assert_fail(const char* cond, const char* file, int line) {
  throw Error(str("internal assert failed: ", cond, " at ", file, ":", line,
                  "; this is a bug in cohort, please report it"));
}
void array_ref_index_error(size_t i, size_t size) {
  throw IndexError(str("ArrayRef::at: index ", i, " is out of range for an array of size ", size));
}
void array_ref_slice_error(size_t n, size_t m, size_t size) {
  throw IndexError(str("ArrayRef::slice: expected n + m <= size (drop n elements, keep m), got n = ", n, ", m = ", m,
                       ", size = ", size));
}
}  // namespace detail

namespace {

// The length of the valid UTF-8 sequence at the start of `s` (1 to 4), or 0 when it is not one
// (an overlong form, a surrogate, past U+10FFFF, or cut short).
size_t utf8_length(std::string_view s) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = byte(0);
  size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  else return 0;
  if (s.size() < n || byte(1) < lo || byte(1) > hi) return 0;
  for (size_t i = 2; i < n; ++i)
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  return n;
}

}  // namespace

std::string escape_text(std::string_view text, bool keep_newlines) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
      ++i;
    } else if (c >= 0x80 && utf8_length(text.substr(i)) > 0) {
      const size_t n = utf8_length(text.substr(i));
      out.append(text.substr(i, n));
      i += n;
    } else {
      if (c == '\n' && keep_newlines) out += '\n';
      else if (c == '\n') out += "\\n";
      else if (c == '\t') out += "\\t";
      else if (c == '\r') out += "\\r";
      else out += {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
      ++i;
    }
  }
  return out;
}

std::ostream& operator<<(std::ostream& os, IntArrayRef a) {
  os << '[';
  for (size_t i = 0; i < a.size(); ++i) os << (i ? ", " : "") << a[i];
  return os << ']';
}

std::ostream& operator<<(std::ostream& os, const Scalar& s) {
  if (s.is_floating_point()) return os << s.to_double();
  if (s.is_bool()) return os << (s.to<bool>() ? "True" : "False");
  return os << s.to_long();
}

}  // namespace cohort
