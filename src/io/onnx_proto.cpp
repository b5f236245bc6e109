// The protobuf wire format's writer and reader (Note [Protobuf by hand] in onnx_proto.h).
#include "io/onnx_proto.h"

#include <cstring>

#include "cohort/core/error.h"

namespace cohort::io::proto {

void Writer::raw_varint(uint64_t value) {
  while (value >= 0x80) {
    data_.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  data_.push_back(static_cast<char>(value));
}

void Writer::varint(int field, uint64_t value) {
  raw_varint(static_cast<uint64_t>(field) << 3 | 0);
  raw_varint(value);
}

void Writer::float32(int field, float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  fixed32(field, bits);
}

void Writer::fixed32(int field, uint32_t bits) {
  raw_varint(static_cast<uint64_t>(field) << 3 | 5);
  for (int i = 0; i < 4; ++i) data_.push_back(static_cast<char>(bits >> (8 * i)));
}

void Writer::fixed64(int field, uint64_t bits) {
  raw_varint(static_cast<uint64_t>(field) << 3 | 1);
  for (int i = 0; i < 8; ++i) data_.push_back(static_cast<char>(bits >> (8 * i)));
}

void Writer::bytes(int field, std::string_view value) {
  raw_varint(static_cast<uint64_t>(field) << 3 | 2);
  raw_varint(value.size());
  data_.append(value);
}

namespace {

struct Cursor {
  std::string_view s;
  size_t pos = 0;
  const char* op;
  const std::string& where;

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(cohort::detail::str(op, ": ", where, ": ", what, " at byte ", pos, " of a ", s.size(), "-byte message"));
  }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (pos >= s.size()) fail("truncated varint");
      const auto byte = static_cast<uint8_t>(s[pos++]);
      if (shift == 63 && byte > 1) fail("varint longer than 64 bits");
      v |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return v;
    }
    fail("varint longer than 10 bytes");
  }
  uint64_t fixed(int n) {
    if (s.size() - pos < static_cast<size_t>(n)) fail(cohort::detail::str("truncated ", 8 * n, "-bit value"));
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= static_cast<uint64_t>(static_cast<uint8_t>(s[pos + i])) << (8 * i);
    pos += n;
    return v;
  }
};

}  // namespace

std::vector<Field> parse(std::string_view message, const char* op, const std::string& where) {
  Cursor c{message, 0, op, where};
  std::vector<Field> fields;
  while (c.pos < message.size()) {
    const uint64_t key = c.varint();
    Field f;
    f.wire_type = static_cast<int>(key & 7);
    const uint64_t number = key >> 3;
    if (number == 0 || number > (1u << 29) - 1) c.fail(cohort::detail::str("invalid field number ", number));
    f.number = static_cast<int>(number);
    switch (f.wire_type) {
      case 0: f.varint = c.varint(); break;
      case 1: f.varint = c.fixed(8); break;
      case 5: f.varint = c.fixed(4); break;
      case 2: {
        const uint64_t n = c.varint();
        if (n > message.size() - c.pos)
          c.fail(cohort::detail::str("field ", f.number, " claims ", n, " bytes but ", message.size() - c.pos, " are left"));
        f.bytes = message.substr(c.pos, n);
        c.pos += n;
        break;
      }
      default: c.fail(cohort::detail::str("field ", f.number, " has wire type ", f.wire_type, ", which ONNX does not use"));
    }
    fields.push_back(f);
  }
  return fields;
}

std::vector<uint64_t> parse_packed_varints(std::string_view bytes, const char* op, const std::string& where) {
  Cursor c{bytes, 0, op, where};
  std::vector<uint64_t> values;
  while (c.pos < bytes.size()) values.push_back(c.varint());
  return values;
}

}  // namespace cohort::io::proto
