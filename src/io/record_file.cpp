// TFRecord framing and CRC-32C (Note [TFRecord] in record_file.h).
#include "record_file.h"

#include <array>
#include <cstring>

#include "cohort/core/error.h"

namespace cohort::io::detail {

namespace {

std::array<uint32_t, 256> crc_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table[i] = c;
  }
  return table;
}

template <class T>
void append_le(std::string& out, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

template <class T>
T read_le(const char* p) {
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) value |= static_cast<T>(static_cast<unsigned char>(p[i])) << (8 * i);
  return value;
}

}  // namespace

uint32_t crc32c(std::string_view bytes) {
  static const std::array<uint32_t, 256> table = crc_table();
  uint32_t c = 0xFFFFFFFFu;
  for (char b : bytes) c = table[(c ^ static_cast<unsigned char>(b)) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

uint32_t masked_crc32c(std::string_view bytes) {
  const uint32_t c = crc32c(bytes);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

std::string frame_record(std::string_view data) {
  std::string out;
  append_le<uint64_t>(out, data.size());
  append_le<uint32_t>(out, masked_crc32c(out));
  out.append(data);
  append_le<uint32_t>(out, masked_crc32c(data));
  return out;
}

std::vector<std::string> read_records(std::string_view bytes, const std::string& what) {
  std::vector<std::string> records;
  size_t at = 0;
  while (bytes.size() - at >= 12) {
    const std::string_view header = bytes.substr(at, 8);
    const auto length = read_le<uint64_t>(header.data());
    COHORT_CHECK(read_le<uint32_t>(bytes.data() + at + 8) == masked_crc32c(header), what, ": record ",
                 records.size(), " at byte ", at, " has a corrupt length (its CRC does not match)");
    if (bytes.size() - at < 16 || length > bytes.size() - at - 16) break;  // truncated: the writer stopped mid-record
    const std::string_view data = bytes.substr(at + 12, length);
    COHORT_CHECK(read_le<uint32_t>(bytes.data() + at + 12 + length) == masked_crc32c(data), what, ": record ",
                 records.size(), " at byte ", at, " has corrupt data (its CRC does not match)");
    records.emplace_back(data);
    at += 16 + length;
  }
  return records;
}

}  // namespace cohort::io::detail
