// Decoding photos and drawings: JPEG (libjpeg-turbo's TurboJPEG API) and PNG (stb_image), told apart
// by their first bytes, into uint8 [H, W, C] tensors, as PIL's Image.open(...).convert(mode) gives them.
//
//   Tensor img = io::read_image("cat.jpg");                                      // uint8 [H, W, 3]
//   Tensor g = io::read_image("digit.png", io::ImageReadOptions().mode(io::ImageMode::kGray));
//   Tensor s = io::read_image("big.jpg", io::ImageReadOptions().min_size(256));  // cheap for big photos
//
// What is handled:
//   - JPEG: grayscale, YCbCr (any chroma subsampling), progressive, CMYK / YCCK (Adobe's inverted
//     convention, as PIL reads it); the EXIF orientation tag (1..8) is applied, as PIL's
//     ImageOps.exif_transpose does, unless apply_exif_orientation(false).
//   - PNG: grey, grey + alpha, RGB, RGBA, palette (with or without transparency), 1..16 bits, interlaced.
//     16-bit samples keep their high byte (as PIL does for 16-bit RGB).
// Colour conversions are PIL's: RGB -> grey is (19595 R + 38470 G + 7471 B + 32768) >> 16; alpha is
// dropped, not composited; grey -> RGB repeats the value; CMYK -> RGB is PIL's cmyk2rgb.
// Errors are cohort::Errors "read_image: <path>: <what is wrong>" (decode_image: "<name>" in place of
// the path); text from the file (a decoder's message) is quoted through escape_text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "cohort/core/tensor.h"

namespace cohort::io {

// The channels of the result (torchvision's ImageReadMode): kUnchanged keeps the file's channels
// (1 grey, 2 grey + alpha, 3 RGB, 4 RGBA; a CMYK JPEG becomes RGB), kGray gives C = 1, kRGB C = 3.
enum class ImageMode { kUnchanged, kGray, kRGB };

struct ImageReadOptions {
  ImageReadOptions& mode(ImageMode m) { mode_ = m; return *this; }
  // With min_size > 0, a JPEG is decoded at the smallest of the scales 1/8, 1/4, 1/2, 1 (libjpeg's
  // DCT-domain downscaling, much cheaper than decoding in full and resizing) whose shorter side is
  // still >= min_size; the result is then ceil(H / d) x ceil(W / d). PNGs are always decoded in full.
  ImageReadOptions& min_size(int64_t s) { min_size_ = s; return *this; }
  ImageReadOptions& apply_exif_orientation(bool a) { apply_exif_orientation_ = a; return *this; }
  // Files whose width * height exceeds this are refused before decoding (a 100-byte file can declare
  // a 65535 x 65535 image), and above half of it decoding goes on with a warning, once per process:
  // Pillow's limits by default (Note [Decompression bombs] in src/io/image_decode.cpp).
  ImageReadOptions& max_pixels(int64_t n) { max_pixels_ = n; return *this; }
  ImageMode mode() const { return mode_; }
  int64_t min_size() const { return min_size_; }
  bool apply_exif_orientation() const { return apply_exif_orientation_; }
  int64_t max_pixels() const { return max_pixels_; }

 private:
  ImageMode mode_ = ImageMode::kRGB;
  int64_t min_size_ = 0;
  bool apply_exif_orientation_ = true;
  int64_t max_pixels_ = 178956970;  // Pillow's DecompressionBombError threshold
};

// Reads a JPEG or PNG file into a contiguous uint8 [H, W, C] tensor (C per the options' mode).
Tensor read_image(const std::string& path, const ImageReadOptions& options = {});

// The same from bytes in memory; `name` stands for the path in error messages.
Tensor decode_image(const uint8_t* data, size_t size, const ImageReadOptions& options = {},
                    const std::string& name = "<memory>");

// True when `path`'s extension is one read_image reads: .jpg, .jpeg, .png (any letter case).
bool is_image_file(const std::string& path);

}  // namespace cohort::io
