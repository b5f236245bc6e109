// PNG through stb_image_write / stb_image, text through stb_easy_font, whose quads are rasterised
// here (they have integer corners, so a quad covers whole pixels and no anti-aliasing is needed).
#include "cohort/io/image.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "cohort/ops/creation.h"
#include "io/file_util.h"
#include "io/image_codec.h"

// The stb headers are C written for many compilers; their warnings are not ours.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
namespace cohort::io::detail {
// stb_image grows its inflate buffer as long as the compressed data goes on: a small PNG (a "zip bomb")
// could ask for gigabytes. decode_png sets this cap on any one allocation from what the header declares.
thread_local size_t stbi_allocation_cap = SIZE_MAX;
inline void* stbi_capped_realloc(void* p, size_t n) { return n > stbi_allocation_cap ? nullptr : std::realloc(p, n); }
}  // namespace cohort::io::detail
#define STBI_MALLOC(n) cohort::io::detail::stbi_capped_realloc(nullptr, n)
#define STBI_REALLOC(p, n) cohort::io::detail::stbi_capped_realloc(p, n)
#define STBI_FREE(p) std::free(p)
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STB_IMAGE_WRITE_STATIC
#include <stb/stb_image_write.h>
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_STATIC
#define STBI_ONLY_PNG
#include <stb/stb_image.h>
#include <stb/stb_easy_font.h>
#pragma GCC diagnostic pop

namespace cohort::io {

namespace {

void append_bytes(void* context, void* data, int size) {
  auto* out = static_cast<std::vector<unsigned char>*>(context);
  const auto* p = static_cast<const unsigned char*>(data);
  out->insert(out->end(), p, p + size);
}

// uint8 HWC, checked, contiguous.
Tensor to_png_layout(const Tensor& image) {
  COHORT_CHECK(image.defined(), "write_png: the image is an undefined tensor");
  if (image.is_floating_point()) {
    COHORT_CHECK(image.dim() == 3 && (image.size(0) == 1 || image.size(0) == 3 || image.size(0) == 4),
                 "write_png: a floating-point image must be [C, H, W] with C = 1, 3 or 4, got ", image.sizes(),
                 image.dim() == 3 && image.size(2) <= 4 ? "; hint: this looks like HWC, use permute({2, 0, 1})" : "");
    return to_uint8_hwc(image);
  }
  COHORT_CHECK(image.dtype() == kUInt8, "write_png: expected a uint8 [H, W, C] or float [C, H, W] image, got ",
               image.dtype(), " ", image.sizes());
  COHORT_CHECK(image.dim() == 3 && image.size(2) >= 1 && image.size(2) <= 4,
               "write_png: a uint8 image must be [H, W, C] with C = 1, 2, 3 or 4, got ", image.sizes(),
               image.dim() == 3 && image.size(0) <= 4 ? "; hint: this looks like CHW, use permute({1, 2, 0})" : "");
  return image.contiguous();
}

// Font text is char*, non-const, and indexes a table by (c - 32): keep it in range.
std::string printable(const std::string& text) {
  std::string out = text;
  for (char& c : out)
    if (c == '\t') c = ' ';
    else if (c != '\n' && (c < 32 || c > 126)) c = '?';
  return out;
}

}  // namespace

std::string encode_png(const Tensor& image) {
  const Tensor hwc = to_png_layout(image);
  const int64_t h = hwc.size(0), w = hwc.size(1), c = hwc.size(2);
  COHORT_CHECK(h >= 1 && w >= 1, "write_png: the image is empty, got ", image.sizes());
  COHORT_CHECK(h <= (1 << 24) && w * c <= (1 << 30), "write_png: the image is too large for PNG, got ", image.sizes());
  std::vector<unsigned char> bytes;
  const int ok = stbi_write_png_to_func(append_bytes, &bytes, static_cast<int>(w), static_cast<int>(h),
                                        static_cast<int>(c), hwc.data_ptr<uint8_t>(), static_cast<int>(w * c));
  COHORT_CHECK(ok != 0, "write_png: stb_image_write failed to encode a ", image.sizes(), " image");
  return std::string(bytes.begin(), bytes.end());
}

void write_png(const std::string& path, const Tensor& image) {
  // Encode first, so that a failure to encode leaves nothing on disk.
  const std::string bytes = encode_png(image);
  detail::AtomicWriter out(path, "write_png");
  out.write(bytes.data(), bytes.size());
  out.commit();
}

Tensor to_uint8_hwc(const Tensor& chw_float) {
  COHORT_CHECK(chw_float.defined(), "to_uint8_hwc: the image is an undefined tensor");
  COHORT_CHECK(chw_float.is_floating_point() && chw_float.dim() == 3,
               "to_uint8_hwc: expected a float32 or float64 image [C, H, W], got ", chw_float.describe());
  const Tensor hwc = chw_float.detach().permute({1, 2, 0}).contiguous();
  Tensor out = empty(hwc.sizes(), TensorOptions(kUInt8));
  uint8_t* dst = out.data_ptr<uint8_t>();
  const int64_t n = hwc.numel();
  dispatch_floating(hwc.dtype(), "to_uint8_hwc", [&](auto tag) {
    using T = decltype(tag);
    const T* src = hwc.data_ptr<T>();
    for (int64_t i = 0; i < n; ++i) {
      const T v = src[i];
      // In T's precision, as torchvision's mul(255).add_(0.5): 0.9f gives 230 there, not 229.
      // !(v > 0) also catches NaN.
      dst[i] = !(v > 0) ? 0 : v >= 1 ? 255 : static_cast<uint8_t>(v * T(255) + T(0.5));
    }
  });
  return out;
}

namespace detail {

namespace {

// Walks the chunks (length, type, data, CRC) up to IEND before stb_image sees them, for two of its faults
// that fuzz_png found:
// - it reserves a chunk's declared length before reading it, so a few bytes declaring a 2 GB IDAT allocate
//   2 GB: a chunk longer than what is left of the file is refused here;
// - it memcpy's an empty IDAT chunk from a null buffer (undefined behaviour): such chunks are legal but carry
//   nothing, so a copy without them is returned instead. Empty when there are none.
std::vector<uint8_t> checked_png_chunks(const uint8_t* data, size_t size, const std::string& op,
                                        const std::string& name) {
  std::vector<uint8_t> out;
  size_t pos = 8, copied = 0;
  while (pos + 8 <= size) {
    const uint32_t length = uint32_t{data[pos]} << 24 | uint32_t{data[pos + 1]} << 16 | uint32_t{data[pos + 2]} << 8 |
                            uint32_t{data[pos + 3]};
    const char* type = reinterpret_cast<const char*>(data + pos + 4);
    if (std::memcmp(type, "IEND", 4) == 0) break;
    COHORT_CHECK(length <= size - pos - 8, op, ": ", escape_text(name), ": not a readable PNG file (a chunk at byte ",
                 pos, " declares ", length, " bytes of data, but only ", size - pos - 8, " remain)");
    if (length == 0 && std::memcmp(type, "IDAT", 4) == 0) {
      out.insert(out.end(), data + copied, data + pos);
      copied = std::min(pos + 12, size);
    }
    pos += 12 + size_t{length};
  }
  if (copied > 0) out.insert(out.end(), data + copied, data + size);
  return out;
}

}  // namespace

Tensor decode_png(const uint8_t* data, size_t size, int64_t max_pixels, const std::string& op,
                  const std::string& name) {
  COHORT_CHECK(size <= static_cast<size_t>(INT32_MAX), op, ": ", escape_text(name), ": the file is too large (",
               size, " bytes)");
  const std::vector<uint8_t> cleaned = checked_png_chunks(data, size, op, name);
  if (!cleaned.empty()) data = cleaned.data(), size = cleaned.size();
  const int n = static_cast<int>(size);
  int w = 0, h = 0, c = 0;
  // The header first: a few bytes can declare a 65535 x 65535 image.
  COHORT_CHECK(stbi_info_from_memory(data, n, &w, &h, &c) != 0, op, ": ", escape_text(name),
               ": not a readable PNG file (", escape_text(stbi_failure_reason()), ")");
  COHORT_CHECK(int64_t{w} * h <= max_pixels, op, ": ", escape_text(name), ": the PNG declares a ", w, "x", h,
               " image, more than max_pixels (", max_pixels, ")");
  // The decoded image, 16 bits a sample and a filter byte a row, twice over for the buffer's doubling.
  detail::stbi_allocation_cap = 2 * (size_t{8} * w * h + h) + (size_t{1} << 16);
  stbi_uc* pixels = stbi_load_from_memory(data, n, &w, &h, &c, 0);
  detail::stbi_allocation_cap = SIZE_MAX;
  COHORT_CHECK(pixels != nullptr || std::strcmp(stbi_failure_reason(), "outofmem") != 0, op, ": ", escape_text(name),
               ": not a readable PNG file (its compressed data inflates to more than a ", w, "x", h, " image needs)");
  COHORT_CHECK(pixels != nullptr, op, ": ", escape_text(name), ": not a readable PNG file (",
               escape_text(stbi_failure_reason()), ")");
  std::unique_ptr<stbi_uc, void (*)(void*)> owner(pixels, stbi_image_free);
  Tensor out = empty({h, w, c}, TensorOptions(kUInt8));
  std::memcpy(out.data_ptr<uint8_t>(), pixels, static_cast<size_t>(h) * w * c);
  return out;
}

}  // namespace detail

Tensor read_png(const std::string& path) {
  detail::FileReader file(path, "read_png");
  std::vector<unsigned char> bytes(file.size());
  file.read(0, bytes.data(), bytes.size());
  return detail::decode_png(bytes.data(), bytes.size(), int64_t{1} << 28, "read_png", path);
}

int64_t text_width(const std::string& text, int scale) {
  COHORT_CHECK(scale >= 1, "text_width: scale must be at least 1, got ", scale);
  std::string s = printable(text);
  return static_cast<int64_t>(stb_easy_font_width(s.data())) * scale;
}

int64_t text_height(const std::string& text, int scale) {
  COHORT_CHECK(scale >= 1, "text_height: scale must be at least 1, got ", scale);
  std::string s = printable(text);
  return static_cast<int64_t>(stb_easy_font_height(s.data())) * scale;
}

void draw_text(const Tensor& image, int64_t x, int64_t y, const std::string& text, std::array<uint8_t, 3> color,
               int scale) {
  COHORT_CHECK(image.defined() && image.dtype() == kUInt8 && image.dim() == 3 && image.size(2) >= 1 &&
                   image.size(2) <= 4,
               "draw_text: expected a uint8 [H, W, C] image with C = 1..4, got ",
               image.defined() ? image.describe() : std::string("an undefined tensor"),
               "; hint: io::to_uint8_hwc converts a float CHW image");
  COHORT_CHECK(scale >= 1, "draw_text: scale must be at least 1, got ", scale);
  std::string s = printable(text);
  // stb writes 4 vertices of 16 bytes per quad and silently truncates when the buffer is full;
  // no glyph has more than 16 quads.
  std::vector<char> buffer(64 * 16 * (s.size() + 1));
  const int quads = stb_easy_font_print(0, 0, s.data(), nullptr, buffer.data(), static_cast<int>(buffer.size()));

  const int64_t h = image.size(0), w = image.size(1), c = image.size(2);
  const int64_t sh = image.stride(0), sw = image.stride(1), sc = image.stride(2);
  uint8_t* base = image.data_ptr<uint8_t>();
  // ITU-R BT.601 luma, as PIL's convert("L") does.
  const auto grey = static_cast<uint8_t>((299 * color[0] + 587 * color[1] + 114 * color[2] + 500) / 1000);
  uint8_t value[4] = {color[0], color[1], color[2], 255};
  if (c <= 2) value[0] = grey, value[1] = 255;
  bool drew = false;
  for (int q = 0; q < quads; ++q) {
    // Vertices 0 and 2 of a quad are its top-left and bottom-right corners.
    float v0[2], v2[2];
    std::memcpy(v0, buffer.data() + q * 64, sizeof v0);
    std::memcpy(v2, buffer.data() + q * 64 + 32, sizeof v2);
    const int64_t x0 = std::max<int64_t>(0, x + static_cast<int64_t>(v0[0]) * scale);
    const int64_t y0 = std::max<int64_t>(0, y + static_cast<int64_t>(v0[1]) * scale);
    const int64_t x1 = std::min<int64_t>(w, x + static_cast<int64_t>(v2[0]) * scale);
    const int64_t y1 = std::min<int64_t>(h, y + static_cast<int64_t>(v2[1]) * scale);
    for (int64_t py = y0; py < y1; ++py)
      for (int64_t px = x0; px < x1; ++px) {
        uint8_t* p = base + py * sh + px * sw;
        for (int64_t ch = 0; ch < c; ++ch) p[ch * sc] = value[ch];
        drew = true;
      }
  }
  if (drew) image.unsafe_impl()->storage()->bump_version();
}

}  // namespace cohort::io
