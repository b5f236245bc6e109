// safetensors reading and writing. The reader trusts nothing in the file: every number in the header
// is checked before it is used as a size or an offset.
#include "cohort/io/safetensors.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <zlib.h>

#include "cohort/ops/creation.h"
#include "io/file_util.h"

namespace cohort::io {

static_assert(std::endian::native == std::endian::little, "io: safetensors and .npy I/O assume a little-endian host");

namespace {

using json = nlohmann::json;
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

struct DTypeName {
  DType dtype;
  const char* name;
};
// In the order Hugging Face's writer lays tensors out (larger alignment first).
constexpr DTypeName kDTypes[] = {{kInt64, "I64"},    {kFloat64, "F64"}, {kFloat32, "F32"}, {kInt32, "I32"},
                                 {kBFloat16, "BF16"}, {kFloat16, "F16"}, {kUInt8, "U8"},    {kBool, "BOOL"}};

int rank_of(DType t) {
  for (int i = 0; i < static_cast<int>(std::size(kDTypes)); ++i)
    if (kDTypes[i].dtype == t) return i;
  COHORT_ASSERT(false);
}
const char* name_of(DType t) { return kDTypes[rank_of(t)].name; }
std::optional<DType> parse_dtype(const std::string& s) {
  for (const auto& d : kDTypes)
    if (s == d.name) return d.dtype;
  return std::nullopt;
}

struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  uint64_t begin, end;
};

struct Header {
  Metadata metadata;
  std::vector<Entry> entries;  // sorted by offset
  uint64_t data_start = 0;     // file offset of the byte buffer
};

// A non-negative integer that fits int64, or nullopt.
std::optional<int64_t> as_index(const json& v) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return v.get<int64_t>();
  return std::nullopt;
}

// Parses the JSON text, failing on any object with a repeated key (nlohmann would keep the last).
json parse_header(const std::string& text, detail::FileReader& file) {
  std::vector<std::set<std::string>> keys;  // one set per open object
  std::string duplicate;
  json root;
  try {
    root = json::parse(text, [&](int, json::parse_event_t event, json& parsed) {
      if (event == json::parse_event_t::object_start) keys.emplace_back();
      else if (event == json::parse_event_t::object_end && !keys.empty()) keys.pop_back();
      else if (event == json::parse_event_t::key && !keys.empty() && !keys.back().insert(parsed.get<std::string>()).second &&
               duplicate.empty())
        duplicate = parsed.get<std::string>();
      return true;
    });
  } catch (const json::exception& e) {
    file.fail(std::string("the header is not valid JSON: ") + e.what());
  }
  if (!duplicate.empty()) file.fail("the header has the key '" + duplicate + "' twice");
  return root;
}

// zlib's CRC-32, already linked for the .gz datasets: it is for accidental damage (a flipped bit, a
// torn or overwritten block), which it catches always for bursts up to 32 bits and otherwise misses
// with odds of 2^-32; it is no defence against deliberate tampering, which a checkpoint never claimed.
uint32_t crc32_of(uint32_t crc, const void* data, size_t nbytes) {
  return static_cast<uint32_t>(::crc32_z(crc, static_cast<const Bytef*>(data), nbytes));
}

std::string hex8(uint32_t v) {
  char buf[9];
  std::snprintf(buf, sizeof buf, "%08x", v);
  return buf;
}

Entry parse_entry(const std::string& name, const json& info, uint64_t buffer_size, detail::FileReader& file) {
  const std::string where = "tensor '" + name + "': ";
  if (!info.is_object()) file.fail(where + "expected an object {dtype, shape, data_offsets}, got " + info.dump());
  for (const auto& [key, value] : info.items())
    if (key != "dtype" && key != "shape" && key != "data_offsets") file.fail(where + "unexpected field '" + key + "'");
  for (const char* key : {"dtype", "shape", "data_offsets"})
    if (!info.contains(key)) file.fail(where + "missing field '" + key + "'");

  Entry e;
  e.name = name;
  const json& dtype = info["dtype"];
  std::optional<DType> dt = dtype.is_string() ? parse_dtype(dtype.get<std::string>()) : std::nullopt;
  if (!dt) file.fail(where + "unsupported dtype " + dtype.dump() + " (cohort reads F32, F64, BF16, F16, I64, I32, U8, BOOL)");
  e.dtype = *dt;

  const json& shape = info["shape"];
  if (!shape.is_array()) file.fail(where + "shape must be an array of integers, got " + shape.dump());
  // Zeros count as ones in the overflow check: an empty tensor's other dims still make its strides.
  int64_t numel = 1, extent = 1;
  for (const json& d : shape) {
    std::optional<int64_t> n = as_index(d);
    if (!n) file.fail(where + "shape must hold non-negative integers, got " + shape.dump());
    if (__builtin_mul_overflow(extent, std::max<int64_t>(*n, 1), &extent))
      file.fail(where + "shape " + shape.dump() + " has too many elements (overflow)");
    numel *= *n;  // <= extent
    e.shape.push_back(*n);
  }
  uint64_t nbytes;
  if (__builtin_mul_overflow(static_cast<uint64_t>(numel), element_size(e.dtype), &nbytes))
    file.fail(where + "shape " + shape.dump() + " has too many bytes (overflow)");

  const json& offsets = info["data_offsets"];
  std::optional<int64_t> begin, end;
  if (offsets.is_array() && offsets.size() == 2) begin = as_index(offsets[0]), end = as_index(offsets[1]);
  if (!begin || !end) file.fail(where + "data_offsets must be [begin, end] with non-negative integers, got " + offsets.dump());
  e.begin = static_cast<uint64_t>(*begin);
  e.end = static_cast<uint64_t>(*end);
  if (e.end < e.begin) file.fail(where + "data_offsets " + offsets.dump() + " end before they begin");
  if (e.end - e.begin != nbytes)
    file.fail(cohort::detail::str(where, "data_offsets ", offsets.dump(), " span ", e.end - e.begin, " bytes, but ",
                                  name_of(e.dtype), " ", shape.dump(), " needs ", nbytes));
  if (e.end > buffer_size)
    file.fail(cohort::detail::str(where, "data_offsets ", offsets.dump(), " run past the end of the byte buffer (",
                                  buffer_size, " bytes)"));
  return e;
}

Header read_header(detail::FileReader& file) {
  if (file.size() < 8) file.fail(cohort::detail::str("the file is ", file.size(), " bytes, shorter than the 8-byte header length"));
  unsigned char prefix[8];
  file.read(0, prefix, 8);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | prefix[i];
  if (n > kMaxHeaderBytes)
    file.fail(cohort::detail::str("header length ", n, " is absurd (more than 100 MB); is this a safetensors file?"));
  if (n > file.size() - 8)
    file.fail(cohort::detail::str("header length ", n, " exceeds the file size (", file.size(), " bytes)"));
  std::string text(n, '\0');
  file.read(8, text.data(), n);
  if (text.empty() || text[0] != '{') file.fail("the header does not start with '{'");

  Header h;
  h.data_start = 8 + n;
  const uint64_t buffer_size = file.size() - h.data_start;
  const json root = parse_header(text, file);
  if (!root.is_object()) file.fail("the header must be a JSON object, got " + root.dump());
  for (const auto& [key, value] : root.items()) {
    if (key == "__metadata__") {
      if (!value.is_object()) file.fail("__metadata__ must be an object of strings, got " + value.dump());
      for (const auto& [k, v] : value.items()) {
        if (!v.is_string()) file.fail("__metadata__ value of '" + k + "' must be a string, got " + v.dump());
        h.metadata.emplace(k, v.get<std::string>());
      }
    } else {
      h.entries.push_back(parse_entry(key, value, buffer_size, file));
    }
  }
  // The tensors must tile the byte buffer: no overlaps, no holes.
  std::sort(h.entries.begin(), h.entries.end(),
            [](const Entry& a, const Entry& b) { return std::tie(a.begin, a.end) < std::tie(b.begin, b.end); });
  uint64_t pos = 0;
  const Entry* prev = nullptr;
  for (const Entry& e : h.entries) {
    if (e.begin < pos)
      file.fail(cohort::detail::str("tensors '", prev->name, "' [", prev->begin, ", ", prev->end, ") and '", e.name, "' [",
                                    e.begin, ", ", e.end, ") overlap"));
    if (e.begin > pos)
      file.fail(cohort::detail::str("bytes [", pos, ", ", e.begin, ") of the byte buffer belong to no tensor (a hole before '",
                                    e.name, "')"));
    pos = e.end;
    prev = &e;
  }
  if (pos != buffer_size)
    file.fail(cohort::detail::str("bytes [", pos, ", ", buffer_size,
                                  ") at the end of the byte buffer belong to no tensor (a hole or trailing data)"));
  return h;
}

void write(const std::filesystem::path& path, std::vector<std::pair<std::string, Tensor>> items, Metadata metadata,
           bool checksum) {
  const char* op = "save_safetensors";
  for (auto& [name, t] : items) {
    COHORT_CHECK(t.defined(), op, ": tensor '", name, "' is undefined");
    COHORT_CHECK(name != "__metadata__", op, ": '__metadata__' is reserved, it cannot name a tensor");
    t = t.detach().cpu().contiguous();
  }
  std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) {
    return std::make_pair(rank_of(a.second.dtype()), std::cref(a.first)) <
           std::make_pair(rank_of(b.second.dtype()), std::cref(b.first));
  });
  if (checksum) {
    uint32_t crc = crc32_of(0, nullptr, 0);
    for (const auto& [name, t] : items) crc = crc32_of(crc, t.data_ptr(), t.nbytes());
    metadata[kChecksumKey] = hex8(crc);
  }
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, t] : items) {
    header[name] = {{"dtype", name_of(t.dtype())}, {"shape", t.sizes().vec()}, {"data_offsets", {offset, offset + t.nbytes()}}};
    offset += t.nbytes();
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const nlohmann::json::exception& e) {
    throw Error(cohort::detail::str(op, ": a tensor name or metadata string is not valid UTF-8 (", e.what(), ")"));
  }
  text.append((8 - text.size() % 8) % 8, ' ');
  unsigned char prefix[8];
  for (int i = 0; i < 8; ++i) prefix[i] = static_cast<unsigned char>(static_cast<uint64_t>(text.size()) >> (8 * i));

  detail::AtomicWriter out(path, op);
  out.write(prefix, 8);
  out.write(text.data(), text.size());
  for (const auto& [name, t] : items) out.write(t.data_ptr(), t.nbytes());
  out.commit();
}

}  // namespace

void save_safetensors(const std::filesystem::path& path, const std::map<std::string, Tensor>& tensors,
                      const Metadata& metadata, bool checksum) {
  write(path, {tensors.begin(), tensors.end()}, metadata, checksum);
}

void save_safetensors(const std::filesystem::path& path, const OrderedDict<std::string, Tensor>& tensors,
                      const Metadata& metadata, bool checksum) {
  std::vector<std::pair<std::string, Tensor>> items;
  for (const auto& item : tensors) items.emplace_back(item.key(), item.value());
  write(path, std::move(items), metadata, checksum);
}

OrderedDict<std::string, Tensor> load_safetensors(const std::filesystem::path& path) {
  detail::FileReader file(path, "load_safetensors");
  const Header h = read_header(file);
  std::optional<std::string> stored;
  if (auto it = h.metadata.find(kChecksumKey); it != h.metadata.end()) {
    stored = it->second;
    if (stored->size() != 8 || stored->find_first_not_of("0123456789abcdef") != std::string::npos)
      file.fail("corrupt: its checksum '" + *stored + "' (" + kChecksumKey + ") is not 8 hex digits");
  }
  uint32_t crc = crc32_of(0, nullptr, 0);
  OrderedDict<std::string, Tensor> out("Tensor");
  for (const Entry& e : h.entries) {  // in file order: they tile the byte buffer
    Tensor t = empty(e.shape, TensorOptions(e.dtype));
    file.read(h.data_start + e.begin, t.data_ptr(), e.end - e.begin);
    crc = crc32_of(crc, t.data_ptr(), e.end - e.begin);
    out.insert(e.name, std::move(t));
  }
  // Damage first: a flipped bit is reported as what it is, not as the odd value it made.
  if (stored && *stored != hex8(crc))
    file.fail("corrupt: the CRC-32 of its tensor bytes is " + hex8(crc) + " but its header says " + *stored +
              "; the file changed after it was written (a damaged disk or copy)");
  for (const Entry& e : h.entries) {
    if (e.dtype != kBool) continue;
    const auto* bytes = static_cast<const unsigned char*>(out[e.name].data_ptr());
    for (uint64_t i = 0; i < e.end - e.begin; ++i)
      if (bytes[i] > 1)
        file.fail(cohort::detail::str("tensor '", e.name, "': BOOL element ", i, " is the byte ", int(bytes[i]),
                                      ", not 0 or 1"));
  }
  return out;
}

Metadata load_safetensors_metadata(const std::filesystem::path& path) {
  detail::FileReader file(path, "load_safetensors_metadata");
  return read_header(file).metadata;
}

}  // namespace cohort::io
