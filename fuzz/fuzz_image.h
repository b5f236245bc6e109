// The body of the image decoder targets (fuzz_jpeg, fuzz_png): the input's first byte picks the mode,
// the DCT scale and whether EXIF orientation applies; the rest is the file, prefixed with the format's
// magic when missing, so every input reaches the decoder under test.
// Contract: decode or throw cohort::Error; a decoded image is uint8 [H, W, C] with C matching the mode.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "cohort/core/error.h"
#include "cohort/io/image_decode.h"

namespace cohort::fuzz {

inline int decode_image_input(const uint8_t* data, size_t size, const std::vector<uint8_t>& magic) {
  using io::ImageMode;
  if (size < 1) return 0;
  const uint8_t knobs = data[0];
  std::vector<uint8_t> file(magic);
  if (size - 1 >= magic.size() && std::equal(magic.begin(), magic.end(), data + 1)) file.clear();
  file.insert(file.end(), data + 1, data + size);
  const ImageMode modes[] = {ImageMode::kRGB, ImageMode::kGray, ImageMode::kUnchanged};
  const ImageMode mode = modes[knobs % 3];
  const auto options = io::ImageReadOptions().mode(mode).min_size((knobs >> 2) % 4 * 8)
                           .apply_exif_orientation((knobs & 0x10) == 0).max_pixels(int64_t{1} << 22);
  Tensor img;
  try {
    img = io::decode_image(file.data(), file.size(), options, "fuzz");
  } catch (const Error&) {
    return 0;
  }
  if (img.dim() != 3 || img.dtype() != kUInt8 || !img.is_contiguous() || img.size(0) < 1 || img.size(1) < 1 ||
      (mode == ImageMode::kRGB && img.size(2) != 3) || (mode == ImageMode::kGray && img.size(2) != 1) ||
      img.size(2) < 1 || img.size(2) > 4)
    std::abort();
  return 0;
}

}  // namespace cohort::fuzz
