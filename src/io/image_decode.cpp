// read_image / decode_image: the format from the first bytes, the decoder (io/image_codec.h), then
// PIL's colour conversions and the EXIF orientation, as plain loops over uint8 HWC.
#include "cohort/io/image_decode.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <utility>
#include <vector>

#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "io/file_util.h"
#include "io/image_codec.h"

namespace cohort::io {

namespace {

bool is_jpeg(const uint8_t* d, size_t n) { return n >= 3 && d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF; }
bool is_png(const uint8_t* d, size_t n) {
  static constexpr uint8_t kMagic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  return n >= 8 && std::memcmp(d, kMagic, 8) == 0;
}

// PIL's rgb2l: ITU-R 601-2 luma in 16-bit fixed point, rounded.
uint8_t luma(const uint8_t* p) {
  return static_cast<uint8_t>((p[0] * 19595u + p[1] * 38470u + p[2] * 7471u + 0x8000u) >> 16);
}
// PIL's MULDIV255: round(a * b / 255) for bytes.
uint8_t muldiv255(uint32_t a, uint32_t b) {
  const uint32_t t = a * b + 128;
  return static_cast<uint8_t>(((t >> 8) + t) >> 8);
}

// [H, W, C_in] -> [H, W, C_out] for C_out in {1, 3} or the file's own channels; CMYK (C_in = 4 from a
// JPEG, Adobe-inverted as stored) always leaves as RGB or grey.
Tensor convert_channels(const Tensor& in, bool cmyk, ImageMode mode) {
  const int64_t h = in.size(0), w = in.size(1), c = in.size(2), n = h * w;
  const uint8_t* src = in.data_ptr<uint8_t>();
  if (cmyk) {
    Tensor rgb = empty({h, w, 3}, TensorOptions(kUInt8));
    uint8_t* dst = rgb.data_ptr<uint8_t>();
    for (int64_t i = 0; i < n; ++i) {
      // Inverted in the file (PIL's "CMYK;I"), then PIL's cmyk2rgb.
      const uint8_t* p = src + 4 * i;
      const uint32_t nk = p[3];  // 255 - k, with k = 255 - p[3]
      for (int k = 0; k < 3; ++k) dst[3 * i + k] = static_cast<uint8_t>(nk - muldiv255(255 - p[k], nk));
    }
    return mode == ImageMode::kGray ? convert_channels(rgb, false, mode) : rgb;
  }
  const int64_t out_c = mode == ImageMode::kUnchanged ? c : mode == ImageMode::kGray ? 1 : 3;
  if (out_c == c) return in;
  Tensor out = empty({h, w, out_c}, TensorOptions(kUInt8));
  uint8_t* dst = out.data_ptr<uint8_t>();
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t* p = src + c * i;
    if (out_c == 1) dst[i] = c <= 2 ? p[0] : luma(p);  // alpha dropped
    else if (c <= 2) dst[3 * i] = dst[3 * i + 1] = dst[3 * i + 2] = p[0];
    else std::memcpy(dst + 3 * i, p, 3);
  }
  return out;
}

// EXIF orientation o (1..8) applied as PIL's ImageOps.exif_transpose: 2 mirror, 3 rotate 180, 4 flip,
// 5 transpose, 6 rotate 90 clockwise, 7 transverse, 8 rotate 90 counter-clockwise.
Tensor apply_orientation(const Tensor& in, int o) {
  if (o <= 1 || o > 8) return in;
  const int64_t h = in.size(0), w = in.size(1), c = in.size(2);
  const bool swap = o >= 5;
  const int64_t oh = swap ? w : h, ow = swap ? h : w;
  Tensor out = empty({oh, ow, c}, TensorOptions(kUInt8));
  const uint8_t* src = in.data_ptr<uint8_t>();
  uint8_t* dst = out.data_ptr<uint8_t>();
  for (int64_t y = 0; y < oh; ++y)
    for (int64_t x = 0; x < ow; ++x) {
      int64_t sy = y, sx = x;
      switch (o) {
        case 2: sx = w - 1 - x; break;
        case 3: sy = h - 1 - y; sx = w - 1 - x; break;
        case 4: sy = h - 1 - y; break;
        case 5: sy = x; sx = y; break;
        case 6: sy = h - 1 - x; sx = y; break;
        case 7: sy = h - 1 - x; sx = w - 1 - y; break;
        case 8: sy = x; sx = w - 1 - y; break;
        default: break;
      }
      std::memcpy(dst + (y * ow + x) * c, src + (sy * w + sx) * c, c);
    }
  return out;
}

std::string first_bytes(const uint8_t* d, size_t n) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < std::min<size_t>(n, 8); ++i) {
    if (i) s += ' ';
    s += kHex[d[i] >> 4];
    s += kHex[d[i] & 15];
  }
  return s.empty() ? "an empty file" : "first bytes " + s;
}

// Note [Decompression bombs]
// A few hundred bytes of PNG or JPEG can declare an image of billions of pixels, and a 730 KB PNG of
// 16000 x 16000 took 20 s and 3.8 GB to decode, per image, per epoch. The declared size is read from
// the header before anything is decoded, with Pillow's limits, which Python users know: a warning
// above half of max_pixels (Pillow's 89,478,485 pixels, its DecompressionBombWarning), a refusal
// above max_pixels (178,956,970 by default, Pillow's DecompressionBombError), each naming the size.
void check_declared_size(int64_t width, int64_t height, const char* format, const ImageReadOptions& options,
                         const std::string& op, const std::string& name) {
  // In 64 unsigned bits: a PNG's two 32-bit sides multiply past int64's range.
  const uint64_t pixels = static_cast<uint64_t>(width) * static_cast<uint64_t>(height);
  const uint64_t limit = static_cast<uint64_t>(options.max_pixels());
  COHORT_CHECK(pixels <= limit, op, ": ", escape_text(name), ": the ", format, " declares a ", width, "x",
               height, " image, more than max_pixels (", options.max_pixels(), "): ", pixels,
               " pixels, as a decompression bomb would declare; ImageReadOptions::max_pixels raises the limit");
  static std::atomic<bool> warned{false};
  if (pixels > limit / 2 && !warned.exchange(true))
    std::cerr << "Warning: " << op << ": " << escape_text(name) << ": the " << format << " declares a " << width << "x"
              << height << " image (" << pixels / 1000000 << " megapixels), more than half of max_pixels ("
              << options.max_pixels() << "); decoding it takes " << pixels * 3 / 1000000
              << " MB or more each time it is read (said once per process)\n";
}

// A PNG's size from its IHDR chunk, which must come first (0 x 0 when the header is cut short).
std::pair<int64_t, int64_t> png_declared_size(const uint8_t* d, size_t n) {
  if (n < 24 || std::memcmp(d + 12, "IHDR", 4) != 0) return {0, 0};
  auto be32 = [&](size_t at) {
    return (int64_t{d[at]} << 24) | (int64_t{d[at + 1]} << 16) | (int64_t{d[at + 2]} << 8) | int64_t{d[at + 3]};
  };
  return {be32(16), be32(20)};
}

Tensor decode(const uint8_t* data, size_t size, const ImageReadOptions& options, const std::string& op,
              const std::string& name) {
  COHORT_CHECK(options.min_size() >= 0 && options.max_pixels() > 0, op, ": min_size must be >= 0 and max_pixels > 0, got ",
               options.min_size(), " and ", options.max_pixels());
  if (is_png(data, size)) {
    const auto [width, height] = png_declared_size(data, size);
    check_declared_size(width, height, "PNG", options, op, name);
    return convert_channels(detail::decode_png(data, size, options.max_pixels(), op, name), false, options.mode());
  }
  COHORT_CHECK(is_jpeg(data, size), op, ": ", escape_text(name), ": not a JPEG or PNG file (", first_bytes(data, size),
               ")");
  const int orientation = options.apply_exif_orientation() ? detail::jpeg_exif_orientation(data, size) : 1;
  const detail::JpegInfo info = detail::read_jpeg_info(data, size, op, name);
  check_declared_size(info.width, info.height, "JPEG", options, op, name);
  int denominator = 1;  // the largest of 2, 4, 8 that keeps the shorter side >= min_size
  const int64_t shorter = std::min(info.height, info.width);
  while (options.min_size() > 0 && denominator < 8 &&
         (shorter + 2 * denominator - 1) / (2 * denominator) >= options.min_size())
    denominator *= 2;
  Tensor pixels = detail::decode_jpeg(data, size, denominator, options.max_pixels(), op, name);
  return apply_orientation(convert_channels(pixels, info.cmyk, options.mode()), orientation);
}

}  // namespace

Tensor read_image(const std::string& path, const ImageReadOptions& options) {
  detail::FileReader file(path, "read_image");
  std::vector<uint8_t> bytes(file.size());
  file.read(0, bytes.data(), bytes.size());
  return decode(bytes.data(), bytes.size(), options, "read_image", path);
}

Tensor decode_image(const uint8_t* data, size_t size, const ImageReadOptions& options, const std::string& name) {
  return decode(data, size, options, "decode_image", name);
}

bool is_image_file(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char ch) { return std::tolower(ch); });
  return ext == ".jpg" || ext == ".jpeg" || ext == ".png";
}

}  // namespace cohort::io
