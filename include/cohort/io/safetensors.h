// safetensors: named tensors in one file, the format of Hugging Face weights
// (https://github.com/huggingface/safetensors). Layout: an 8-byte little-endian header length N, N
// bytes of JSON header padded with spaces to a multiple of 8, then the tensors' bytes back to back:
//   {"__metadata__": {"k": "v"}, "w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}
// Offsets count from the first byte after the header. dtypes: F32 F64 BF16 F16 I64 I32 U8 BOOL (cohort's).
//
//   io::save_safetensors("w.safetensors", net->state_dict());
//   auto sd = io::load_safetensors("w.safetensors");   // sd["fc.weight"]
#pragma once

#include <filesystem>
#include <map>
#include <string>

#include "cohort/core/tensor.h"
#include "cohort/nn/ordered_dict.h"

namespace cohort::io {

using Metadata = std::map<std::string, std::string>;

// The metadata key of a checksum of the byte buffer: the CRC-32 of every tensor byte, in file order,
// as 8 lowercase hex digits. Written when asked (io::save_checkpoint asks), verified by every load
// when present; files without it (from other writers) load as before.
inline constexpr const char* kChecksumKey = "cohort.crc32";

// Writes the tensors (any strides, by value; undefined ones are an error) and the metadata
// atomically (Note [Atomic writes] in src/io/file_util.h: the old file survives any failure).
// Deterministic: the same tensors give the same bytes, in the order Hugging Face's writer uses
// (I64, F64, F32, I32, BF16, F16, U8, BOOL, then by name, so every tensor is aligned to its element
// size); the header is compact JSON with "__metadata__" first, present only when metadata is not empty.
// With `checksum`, metadata[kChecksumKey] is added (then the bytes differ from Hugging Face's writer's).
// Throws a cohort::Error naming the file on any failure.
void save_safetensors(const std::filesystem::path& path, const std::map<std::string, Tensor>& tensors,
                      const Metadata& metadata = {}, bool checksum = false);
void save_safetensors(const std::filesystem::path& path, const OrderedDict<std::string, Tensor>& tensors,
                      const Metadata& metadata = {}, bool checksum = false);

// Reads every tensor (contiguous, on the CPU), in file order. The whole file is validated before
// anything is allocated: header length, JSON syntax, duplicate keys, dtypes, shapes, data offsets
// (sizes, bounds, no overlaps, no holes: the tensors must cover the byte buffer exactly) and BOOL
// bytes (0 or 1); then, when the header holds kChecksumKey, the CRC-32 of the bytes read, which must
// match ("<path>: corrupt: ..." otherwise). A malformed file throws a cohort::Error
// "load_safetensors: <path>: <what is wrong>".
OrderedDict<std::string, Tensor> load_safetensors(const std::filesystem::path& path);

// The "__metadata__" map alone (empty if absent), with the same header validation; the tensor bytes
// are not read, so their checksum is not verified.
Metadata load_safetensors_metadata(const std::filesystem::path& path);

}  // namespace cohort::io
