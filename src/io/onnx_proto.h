// Internal to io/: the protobuf wire format, as much as ONNX files need (Note [Protobuf by hand]).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cohort::io::proto {

// Note [Protobuf by hand]
// A protobuf message is a sequence of fields, each a key varint (field number << 3 | wire type)
// followed by its value: wire type 0 a varint (int32/int64/bool/enum; negative numbers as 10-byte
// two's complement), 1 eight little-endian bytes (double), 2 a varint length then that many bytes
// (strings, bytes, nested messages, packed repeated numbers), 5 four little-endian bytes (float).
// Repeated fields repeat the key. ONNX's model needs eleven messages of that, so cohort writes them
// with the ~40 lines below instead of depending on libprotobuf and protoc (and on a copy of
// onnx.proto in the build): no generated code, no runtime library for users of the exporter. The
// reader is as small and checks every length against what is left, for the tests and the fuzzer.
class Writer {
 public:
  void varint(int field, uint64_t value);
  void int64(int field, int64_t value) { varint(field, static_cast<uint64_t>(value)); }
  void float32(int field, float value);
  void fixed32(int field, uint32_t bits);
  void fixed64(int field, uint64_t bits);
  void bytes(int field, std::string_view value);
  void message(int field, const Writer& nested) { bytes(field, nested.data_); }
  const std::string& data() const { return data_; }

 private:
  void raw_varint(uint64_t value);
  std::string data_;
};

struct Field {
  int number = 0;
  int wire_type = 0;
  uint64_t varint = 0;     // wire types 0, 1 and 5 (the raw bits for 1 and 5)
  std::string_view bytes;  // wire type 2
};

// The fields of one message, in order. Throws cohort::Error "<op>: <where>: ..." for a truncated
// varint, key or value, a length past the end, field number 0, or wire types 3/4 (groups).
std::vector<Field> parse(std::string_view message, const char* op, const std::string& where);
// The varints of a packed repeated field's bytes.
std::vector<uint64_t> parse_packed_varints(std::string_view bytes, const char* op, const std::string& where);

}  // namespace cohort::io::proto
