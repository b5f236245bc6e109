// The decoders behind io::decode_image, one per format, each returning the file's own layout
// before colour conversion and orientation (src/io/image_decode.cpp does those).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "cohort/core/tensor.h"

namespace cohort::io::detail {

// Throws "<op>: <name>: <what>" for anything it cannot decode or that has more than max_pixels.
// PNG: uint8 [H, W, C], C = 1..4 as in the file (palettes expanded, 16-bit reduced to the high byte).
Tensor decode_png(const uint8_t* data, size_t size, int64_t max_pixels, const std::string& op,
                  const std::string& name);

// JPEG: uint8 [H, W, C] with C = 1 (grey JPEG, or any JPEG when `grey`), 3 (RGB) or 4 (CMYK as stored,
// i.e. Adobe-inverted); scaled by 1/denominator (1, 2, 4 or 8) in the DCT domain. EXIF is not applied.
struct JpegInfo {
  int64_t height = 0, width = 0;
  bool cmyk = false;  // CMYK or YCCK
  bool grey = false;  // one component
};
JpegInfo read_jpeg_info(const uint8_t* data, size_t size, const std::string& op, const std::string& name);
Tensor decode_jpeg(const uint8_t* data, size_t size, int denominator, int64_t max_pixels, const std::string& op,
                   const std::string& name);

// The EXIF orientation (1..8) from a JPEG's APP1 "Exif" segment; 1 when there is none or it is unreadable.
int jpeg_exif_orientation(const uint8_t* data, size_t size);

}  // namespace cohort::io::detail
