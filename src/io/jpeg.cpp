// JPEG through libjpeg-turbo's TurboJPEG API (one decompressor per thread, kept for the thread's
// life), and the EXIF orientation read from the file's APP1 segment.
#include <turbojpeg.h>

#include <algorithm>
#include <memory>

#include "cohort/core/error.h"
#include "cohort/ops/creation.h"
#include "io/image_codec.h"

namespace cohort::io::detail {

namespace {

struct HandleDeleter {
  void operator()(void* h) const { tjDestroy(h); }
};

tjhandle thread_decompressor(const std::string& op, const std::string& name) {
  thread_local std::unique_ptr<void, HandleDeleter> handle(tjInitDecompress());
  COHORT_CHECK(handle != nullptr, op, ": ", escape_text(name), ": libjpeg-turbo could not create a decompressor (",
               escape_text(tjGetErrorStr2(nullptr)), ")");
  return handle.get();
}

[[noreturn]] void fail_jpeg(tjhandle h, const std::string& op, const std::string& name, const char* when) {
  throw Error(cohort::detail::str(op, ": ", escape_text(name), ": not a readable JPEG file (", when, ": ",
                                  escape_text(tjGetErrorStr2(h)), ")"));
}

uint32_t read_u16(const uint8_t* p, bool little) { return little ? p[0] | p[1] << 8 : p[0] << 8 | p[1]; }
uint32_t read_u32(const uint8_t* p, bool little) {
  return little ? read_u16(p, true) | read_u16(p + 2, true) << 16 : read_u16(p, false) << 16 | read_u16(p + 2, false);
}

// Orientation tag (0x0112) of IFD0 in a TIFF structure; 1 when absent or malformed.
int tiff_orientation(const uint8_t* t, size_t n) {
  if (n < 8) return 1;
  bool little;
  if (t[0] == 'I' && t[1] == 'I') little = true;
  else if (t[0] == 'M' && t[1] == 'M') little = false;
  else return 1;
  if (read_u16(t + 2, little) != 42) return 1;
  const uint64_t ifd = read_u32(t + 4, little);
  if (ifd + 2 > n) return 1;
  const uint32_t entries = read_u16(t + ifd, little);
  for (uint32_t i = 0; i < entries; ++i) {
    const uint64_t e = ifd + 2 + 12 * uint64_t{i};
    if (e + 12 > n) return 1;
    if (read_u16(t + e, little) != 0x0112) continue;
    if (read_u16(t + e + 2, little) != 3 || read_u32(t + e + 4, little) != 1) return 1;  // one SHORT
    const uint32_t v = read_u16(t + e + 8, little);
    return v >= 1 && v <= 8 ? static_cast<int>(v) : 1;
  }
  return 1;
}

}  // namespace

int jpeg_exif_orientation(const uint8_t* data, size_t size) {
  // Markers from SOI up to the first scan: FF xx, then (for all but the stand-alone ones) a 2-byte
  // big-endian length that counts itself.
  size_t pos = 2;
  while (pos + 4 <= size) {
    if (data[pos] != 0xFF) return 1;
    const uint8_t marker = data[pos + 1];
    if (marker == 0xFF) { ++pos; continue; }  // fill byte
    if (marker == 0xDA || marker == 0xD9) return 1;  // start of scan, end of image
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) { pos += 2; continue; }
    const size_t length = read_u16(data + pos + 2, false);
    if (length < 2 || pos + 2 + length > size) return 1;
    const uint8_t* body = data + pos + 4;
    const size_t body_size = length - 2;
    static constexpr uint8_t kExif[6] = {'E', 'x', 'i', 'f', 0, 0};
    if (marker == 0xE1 && body_size >= 6 && std::equal(kExif, kExif + 6, body))
      return tiff_orientation(body + 6, body_size - 6);
    pos += 2 + length;
  }
  return 1;
}

JpegInfo read_jpeg_info(const uint8_t* data, size_t size, const std::string& op, const std::string& name) {
  tjhandle h = thread_decompressor(op, name);
  int width = 0, height = 0, subsamp = 0, colorspace = 0;
  if (tjDecompressHeader3(h, data, static_cast<unsigned long>(size), &width, &height, &subsamp, &colorspace) != 0)
    fail_jpeg(h, op, name, "reading the header");
  JpegInfo info;
  info.width = width;
  info.height = height;
  info.cmyk = colorspace == TJCS_CMYK || colorspace == TJCS_YCCK;
  info.grey = colorspace == TJCS_GRAY;
  return info;
}

Tensor decode_jpeg(const uint8_t* data, size_t size, int denominator, int64_t max_pixels, const std::string& op,
                   const std::string& name) {
  const JpegInfo info = read_jpeg_info(data, size, op, name);
  COHORT_CHECK(info.width * info.height <= max_pixels, op, ": ", escape_text(name), ": the JPEG declares a ",
               info.width, "x", info.height, " image, more than max_pixels (", max_pixels, ")");
  const tjscalingfactor factor{1, denominator};
  const int width = TJSCALED(static_cast<int>(info.width), factor);
  const int height = TJSCALED(static_cast<int>(info.height), factor);
  const int format = info.cmyk ? TJPF_CMYK : info.grey ? TJPF_GRAY : TJPF_RGB;
  const int channels = tjPixelSize[format];
  Tensor out = empty({height, width, channels}, TensorOptions(kUInt8));
  tjhandle h = thread_decompressor(op, name);
  // LIMITSCANS: a progressive file of thousands of tiny scans would take minutes; STOPONWARNING: a
  // truncated or corrupt file is an error (as in PIL), not a half-grey picture.
  const int flags = TJFLAG_LIMITSCANS | TJFLAG_STOPONWARNING;
  if (tjDecompress2(h, data, static_cast<unsigned long>(size), out.data_ptr<uint8_t>(), width, width * channels,
                    height, format, flags) != 0)
    fail_jpeg(h, op, name, "decoding");
  return out;
}

}  // namespace cohort::io::detail
