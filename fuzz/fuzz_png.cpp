// io::decode_image on PNG bytes: stb_image's chunk, zlib and filter decoding (palettes, 16-bit,
// interlacing), the size limit and the channel conversions, in every mode.
// Contract: decode or throw cohort::Error; a decoded image is uint8 [H, W, C] with C matching the mode.
#include <algorithm>
#include <cstdlib>
#include <vector>

#include "cohort/core/error.h"
#include "cohort/io/image_decode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using cohort::io::ImageMode;
  // The input's first byte picks the mode and scale, the rest is the file (prefixed with the
  // format's magic when missing, so every input reaches this decoder).
  if (size < 1) return 0;
  const uint8_t knobs = data[0];
  static const uint8_t kMagic[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  std::vector<uint8_t> file(kMagic, kMagic + 8);
  if (size - 1 >= 8 && std::equal(kMagic, kMagic + 8, data + 1)) file.clear();
  file.insert(file.end(), data + 1, data + size);
  const ImageMode modes[] = {ImageMode::kRGB, ImageMode::kGray, ImageMode::kUnchanged};
  const ImageMode mode = modes[knobs % 3];
  const auto options = cohort::io::ImageReadOptions().mode(mode).min_size((knobs >> 2) % 4 * 8)
                           .apply_exif_orientation((knobs & 0x10) == 0).max_pixels(int64_t{1} << 22);
  cohort::Tensor img;
  try {
    img = cohort::io::decode_image(file.data(), file.size(), options, "fuzz");
  } catch (const cohort::Error&) {
    return 0;
  }
  if (img.dim() != 3 || img.dtype() != cohort::kUInt8 || !img.is_contiguous() || img.size(0) < 1 ||
      img.size(1) < 1 || (mode == ImageMode::kRGB && img.size(2) != 3) || (mode == ImageMode::kGray && img.size(2) != 1) ||
      img.size(2) < 1 || img.size(2) > 4)
    std::abort();
  return 0;
}
