// Internal to io/: TFRecord framing, the container of TensorBoard's event files (Note [TFRecord]).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cohort::io::detail {

// Note [TFRecord]
// A record is its length (uint64, little-endian), the masked CRC-32C of those 8 bytes (uint32), the
// data, and the masked CRC-32C of the data. CRC-32C is the Castagnoli polynomial (reflected 0x82F63B78)
// and masking rotates it right by 15 bits and adds 0xa282ead8, so that a CRC of bytes holding CRCs is
// not degenerate. TensorFlow's and TensorBoard's readers check both CRCs.

uint32_t crc32c(std::string_view bytes);
uint32_t masked_crc32c(std::string_view bytes);

// The framed record for `data`.
std::string frame_record(std::string_view data);

// The records of a file's bytes, each CRC checked; throws a cohort::Error naming `what` and the
// record's index and offset for a bad CRC or a length past the end. A truncated last record (a writer
// that died mid-write) ends the list, as TensorBoard's reader treats it.
std::vector<std::string> read_records(std::string_view bytes, const std::string& what);

}  // namespace cohort::io::detail
