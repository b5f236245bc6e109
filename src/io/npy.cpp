// .npy reading and writing. The header is a Python dict literal; a small parser reads the subset
// numpy writes ('key': 'string' | True | False | (ints,)) and rejects anything else.
#include "cohort/io/npy.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cohort/ops/creation.h"
#include "io/file_util.h"

namespace cohort::io {

namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kAlign = 64;          // numpy's ARRAY_ALIGN
constexpr size_t kGrowthDigits = 21;   // numpy's GROWTH_AXIS_MAX_DIGITS

struct Descr {
  DType dtype;
  const char* code;  // numpy's descr without the byte-order character
  char order;        // what numpy.save writes: '<' or '|'
};
// numpy has no bfloat16: a bfloat16 tensor has no .npy form.
constexpr Descr kDescrs[] = {{kFloat32, "f4", '<'}, {kFloat64, "f8", '<'}, {kFloat16, "f2", '<'}, {kInt64, "i8", '<'},
                             {kInt32, "i4", '<'},   {kUInt8, "u1", '|'},   {kBool, "b1", '|'}};

std::string descr_of(DType t) {
  for (const auto& d : kDescrs)
    if (d.dtype == t) return std::string(1, d.order) + d.code;
  COHORT_ASSERT(false);
}

// Python's repr of a tuple of ints: (), (3,), (2, 3).
std::string repr_shape(IntArrayRef shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// ---- Reading the header dict ----------------------------------------------------------------------

using Value = std::variant<std::string, bool, Shape>;

class DictParser {
 public:
  DictParser(const std::string& text, detail::FileReader& file) : s_(text), file_(file) {}

  std::map<std::string, Value> parse() {
    std::map<std::string, Value> out;
    expect('{');
    while (skip_space(), peek() != '}') {
      std::string key = parse_string();
      expect(':');
      Value v = parse_value();
      if (!out.emplace(key, std::move(v)).second) fail("the key '" + key + "' appears twice");
      skip_space();
      if (peek() == ',') ++i_;
      else if (peek() != '}') fail("expected ',' or '}'");
    }
    ++i_;
    skip_space();
    if (i_ != s_.size()) fail("unexpected text after the closing '}'");
    return out;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    file_.fail(cohort::detail::str("malformed header dict at character ", i_, ": ", what, "; header: ", s_));
  }
  void skip_space() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  char peek() {
    if (i_ >= s_.size()) fail("unexpected end");
    return s_[i_];
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++i_;
  }
  std::string parse_string() {
    skip_space();
    const char quote = peek();
    if (quote != '\'' && quote != '"') fail("expected a quoted string");
    const size_t end = s_.find(quote, ++i_);
    if (end == std::string::npos) fail("unterminated string");
    std::string out = s_.substr(i_, end - i_);
    if (out.find('\\') != std::string::npos) fail("escapes in strings are not supported");
    i_ = end + 1;
    return out;
  }
  bool starts_with(const char* word) { return s_.compare(i_, std::strlen(word), word) == 0; }
  Value parse_value() {
    skip_space();
    if (starts_with("True")) return i_ += 4, true;
    if (starts_with("False")) return i_ += 5, false;
    if (peek() == '(') return parse_tuple();
    if (peek() == '\'' || peek() == '"') return parse_string();
    fail("expected a string, True, False or a tuple of integers");
  }
  Shape parse_tuple() {
    Shape out;
    bool trailing_comma = false;
    expect('(');
    while (skip_space(), peek() != ')') {
      if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("expected a non-negative integer in the shape");
      int64_t n = 0;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_])))
        if (__builtin_mul_overflow(n, 10, &n) || __builtin_add_overflow(n, s_[i_++] - '0', &n)) fail("shape entry too large");
      if (i_ < s_.size() && s_[i_] == 'L') ++i_;  // Python 2 longs
      out.push_back(n);
      skip_space();
      trailing_comma = peek() == ',';
      if (trailing_comma) ++i_;
      else if (peek() != ')') fail("expected ',' or ')' in the shape");
    }
    ++i_;
    if (out.size() == 1 && !trailing_comma) fail("(n) is not a tuple, (n,) is");
    return out;
  }

  const std::string& s_;
  detail::FileReader& file_;
  size_t i_ = 0;
};

struct Header {
  DType dtype;
  bool swap;  // big-endian data
  bool fortran_order;
  Shape shape;
  uint64_t data_start;
};

Header read_header(detail::FileReader& file) {
  unsigned char prefix[12];
  if (file.size() < 10) file.fail(cohort::detail::str("the file is ", file.size(), " bytes, too short for a .npy header"));
  file.read(0, prefix, 8);
  if (std::memcmp(prefix, kMagic, kMagicLen) != 0) file.fail("not a .npy file (the magic string \\x93NUMPY is missing)");
  const int major = prefix[6], minor = prefix[7];
  if ((major < 1 || major > 3) || minor != 0)
    file.fail(cohort::detail::str("unsupported format version ", major, ".", minor, " (cohort reads 1.0, 2.0 and 3.0)"));
  const size_t len_bytes = major == 1 ? 2 : 4;
  file.read(8, prefix + 8, len_bytes);
  uint64_t hlen = 0;
  for (size_t i = len_bytes; i-- > 0;) hlen = (hlen << 8) | prefix[8 + i];
  Header h;
  h.data_start = 8 + len_bytes + hlen;
  if (h.data_start > file.size())
    file.fail(cohort::detail::str("header length ", hlen, " exceeds the file size (", file.size(), " bytes)"));
  std::string text(hlen, '\0');
  file.read(8 + len_bytes, text.data(), hlen);
  if (major < 3)
    for (unsigned char c : text)
      if (c >= 0x80) file.fail("the header of a version 1.0 or 2.0 file must be ASCII");

  const std::map<std::string, Value> dict = DictParser(text, file).parse();
  for (const auto& [key, value] : dict)
    if (key != "descr" && key != "fortran_order" && key != "shape") file.fail("unexpected key '" + key + "' in the header");
  auto get = [&](const char* key) -> const Value& {
    auto it = dict.find(key);
    if (it == dict.end()) file.fail(std::string("the header lacks the key '") + key + "'");
    return it->second;
  };
  const auto* descr = std::get_if<std::string>(&get("descr"));
  const auto* fortran = std::get_if<bool>(&get("fortran_order"));
  const auto* shape = std::get_if<Shape>(&get("shape"));
  if (!descr) file.fail("'descr' must be a string (structured dtypes are not supported)");
  if (!fortran) file.fail("'fortran_order' must be True or False");
  if (!shape) file.fail("'shape' must be a tuple of integers");

  const Descr* found = nullptr;
  if (descr->size() == 3 && std::strchr("<>=|", (*descr)[0]))
    for (const auto& d : kDescrs)
      if (descr->substr(1) == d.code) found = &d;
  // '|' (not applicable) only makes sense for one-byte types.
  if (!found || ((*descr)[0] == '|' && element_size(found->dtype) != 1))
    file.fail("unsupported dtype '" + *descr + "' (cohort reads <f4 <f8 <f2 <i8 <i4 |u1 |b1)");
  h.dtype = found->dtype;
  h.swap = (*descr)[0] == '>' && element_size(h.dtype) > 1;
  h.fortran_order = *fortran;
  h.shape = *shape;
  return h;
}

void byteswap(char* data, size_t n, size_t width) {
  for (size_t i = 0; i < n; i += width) std::reverse(data + i, data + i + width);
}

}  // namespace

void save_npy(const std::filesystem::path& path, const Tensor& tensor) {
  COHORT_CHECK(tensor.defined(), "save_npy: the tensor is undefined");
  COHORT_CHECK_AS(TypeError, tensor.dtype() != kBFloat16,
                  "save_npy: numpy has no bfloat16 dtype; hint: save .to(kFloat32) or use safetensors (BF16)");
  const Tensor t = tensor.detach().cpu().contiguous();
  // Exactly numpy.lib.format._write_array_header: sorted keys, growth padding, 64-byte alignment.
  std::string dict = "{'descr': '" + descr_of(t.dtype()) + "', 'fortran_order': False, 'shape': " + repr_shape(t.sizes()) + ", }";
  if (t.dim() > 0) dict.append(kGrowthDigits - std::to_string(t.size(0)).size(), ' ');
  int major = 1;
  size_t len_bytes = 2;
  size_t pad = kAlign - (kMagicLen + 2 + len_bytes + dict.size() + 1) % kAlign;
  if (dict.size() + 1 + pad > 65535) {
    major = 2, len_bytes = 4;
    pad = kAlign - (kMagicLen + 2 + len_bytes + dict.size() + 1) % kAlign;
  }
  const uint64_t hlen = dict.size() + 1 + pad;
  std::string header(kMagic, kMagicLen);
  header += static_cast<char>(major);
  header += '\0';
  for (size_t i = 0; i < len_bytes; ++i) header += static_cast<char>(hlen >> (8 * i));
  header += dict;
  header.append(pad, ' ');
  header += '\n';

  detail::AtomicWriter out(path, "save_npy");
  out.write(header.data(), header.size());
  out.write(t.data_ptr(), t.nbytes());
  out.commit();
}

Tensor load_npy(const std::filesystem::path& path) {
  detail::FileReader file(path, "load_npy");
  const Header h = read_header(file);
  // Zeros count as ones in the overflow check: an empty array's other dims still make its strides.
  int64_t numel = 1, extent = 1;
  for (int64_t d : h.shape) {
    if (__builtin_mul_overflow(extent, std::max<int64_t>(d, 1), &extent))
      file.fail("shape " + repr_shape(h.shape) + " has too many elements (overflow)");
    numel *= d;  // <= extent
  }
  uint64_t nbytes;
  if (__builtin_mul_overflow(static_cast<uint64_t>(numel), element_size(h.dtype), &nbytes))
    file.fail("shape " + repr_shape(h.shape) + " has too many bytes (overflow)");
  const uint64_t available = file.size() - h.data_start;
  if (available != nbytes)
    file.fail(cohort::detail::str("the data is ", available, " bytes, but ", repr_shape(h.shape), " of ", dtype_name(h.dtype),
                                  " needs ", nbytes, available < nbytes ? " (truncated file)" : " (trailing bytes)"));

  // Fortran order: the bytes are the C-order array of the reversed shape; transpose it back.
  Shape stored = h.shape;
  if (h.fortran_order) std::reverse(stored.begin(), stored.end());
  Tensor t = empty(stored, TensorOptions(h.dtype));
  file.read(h.data_start, t.data_ptr(), nbytes);
  if (h.swap) byteswap(static_cast<char*>(t.data_ptr()), nbytes, element_size(h.dtype));
  if (h.dtype == kBool) {
    const auto* bytes = static_cast<const unsigned char*>(t.data_ptr());
    for (uint64_t i = 0; i < nbytes; ++i)
      if (bytes[i] > 1) file.fail(cohort::detail::str("bool element ", i, " is the byte ", int(bytes[i]), ", not 0 or 1"));
  }
  if (h.fortran_order && t.dim() > 1) {
    Shape dims(t.dim());
    std::iota(dims.rbegin(), dims.rend(), 0);
    t = t.permute(dims).contiguous();
  }
  return t;
}

}  // namespace cohort::io
