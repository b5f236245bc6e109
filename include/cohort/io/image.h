// PNG files and a tiny bitmap font, for looking at images and predictions.
//
//   io::write_png("grid.png", data::make_grid(batch));   // float CHW in [0, 1]
//   Tensor img = io::read_png("grid.png");               // uint8 [H, W, C]
//   io::draw_text(img, 4, 4, "cat", {255, 0, 0});         // in place
//
// Two layouts, told apart by dtype, as in torchvision: uint8 images are HWC (the layout of PNG and
// of read_png), floating images are CHW (the layout of networks and of data::make_grid).
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "cohort/core/tensor.h"

namespace cohort::io {

// Writes an 8-bit PNG atomically (Note [Atomic writes] in src/io/file_util.h): a failure, such as
// a missing directory, throws a cohort::Error naming the path and leaves no partial file.
// image: uint8 [H, W, C] with C = 1 (grey), 2 (grey + alpha), 3 (RGB) or 4 (RGBA); or float32 /
// float64 [C, H, W] with C = 1, 3 or 4 and values in [0, 1], clamped, converted as
// to_uint8_hwc does (round(255 v); NaN becomes 0). Any strides. H, W >= 1.
void write_png(const std::string& path, const Tensor& image);
// The PNG file's bytes for the same images, in memory.
std::string encode_png(const Tensor& image);

// Reads an 8- or 16-bit PNG (16-bit is reduced to 8) into a contiguous uint8 [H, W, C] tensor, C
// being the file's channel count (1, 2, 3 or 4). Throws a cohort::Error "read_png: <path>: ..." for a
// missing or malformed file.
Tensor read_png(const std::string& path);

// float32 / float64 [C, H, W] with values in [0, 1] to uint8 [H, W, C], the layout of PNG files:
// each value is clamped to [0, 1] and becomes floor(255 v + 0.5), computed in the image's dtype as
// torchvision's save_image does, so the bytes match a PNG saved by PyTorch; NaN becomes 0. Any C.
Tensor to_uint8_hwc(const Tensor& chw_float);

// Draws text in place with stb_easy_font's bitmap font (ASCII; '\n' starts a new line, other
// characters outside ' '..'~' draw as '?'). (x, y) is the top-left corner of the text's box,
// text_width(text, scale) by text_height(text, scale) pixels; nothing outside that box changes.
// Each font pixel is a scale x scale square. Pixels outside the image are clipped, so x and y may be
// negative. image: uint8 [H, W, C], C = 1..4, any strides; with C = 1 or 2 the grey value is the
// color's luminance, with C = 2 or 4 alpha becomes 255.
void draw_text(const Tensor& image_hwc_uint8, int64_t x, int64_t y, const std::string& text,
               std::array<uint8_t, 3> color, int scale = 1);

// Size in pixels of the box draw_text fills: the widest line's advance (which includes the spacing
// after its last character, 1 or 2 font pixels), and 12 font pixels per line (0 for "").
int64_t text_width(const std::string& text, int scale = 1);
int64_t text_height(const std::string& text, int scale = 1);

}  // namespace cohort::io
