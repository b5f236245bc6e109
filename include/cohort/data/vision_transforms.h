// torchvision's image transforms (the tensor versions: torchvision.transforms.functional on tensors),
// as cohort data::Transforms. Included by data/transforms.h.
//
//   auto train = data::transforms::Compose({T::RandomResizedCrop(224), T::RandomHorizontalFlip(),
//                                           T::ColorJitter(0.4, 0.4, 0.4), T::ToTensor(),
//                                           T::Normalize({0.485, 0.456, 0.406}, {0.229, 0.224, 0.225})});
//   auto eval = data::transforms::Compose({T::Resize(256), T::CenterCrop(224), T::ToTensor(), ...});
//
// Every transform here takes an image in either of cohort's layouts, told apart by dtype (as in
// io/image.h): uint8 [H, W, C] (or [H, W]), as io::read_image and the datasets give it, or float
// [C, H, W] (after ToTensor), and returns the same layout and dtype. Working on uint8 before ToTensor
// is cheaper (fewer bytes) and gives torchvision's uint8 results: computed in float32, then rounded
// (Resize) or truncated (ColorJitter's blends) to uint8 exactly as torchvision's tensor code does.
// Random ones draw only from the Generator they are passed (the DataLoader's per-sample one), so the
// batches are the same for any number of workers.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "cohort/core/array_ref.h"
#include "cohort/core/generator.h"
#include "cohort/core/tensor.h"
#include "cohort/data/dataset.h"

namespace cohort::data::transforms {

// Bilinear resize with antialias (torchvision's Resize(size, antialias=True) on tensors, i.e.
// F.interpolate(mode="bilinear", align_corners=False, antialias=True)). size: one value = the shorter
// side's new length, the longer side scaled to keep the aspect ratio (truncated, as torchvision);
// two values = exact {height, width}. Throws at construction for sizes < 1 or more than 2 values.
data::Transform Resize(IntArrayRef size);

// Crops the central {height, width} (one value: a square); an image smaller than that is padded with
// zeros first, as torchvision's CenterCrop. The window's top is round((H - h) / 2) with Python's
// round-half-to-even, as torchvision's.
data::Transform CenterCrop(IntArrayRef size);

// torchvision's RandomResizedCrop: a box of area scale * H * W (uniform in `scale`) and aspect ratio
// w / h log-uniform in `ratio`, at a uniform position; 10 tries, then a central crop clamped to
// `ratio`; the box is resized to `size` (one value: square) as Resize does.
data::Transform RandomResizedCrop(IntArrayRef size, std::array<double, 2> scale = {0.08, 1.0},
                                  std::array<double, 2> ratio = {3.0 / 4.0, 4.0 / 3.0});

// torchvision's ColorJitter(brightness, contrast, saturation, hue): factors drawn uniform in
// [max(0, 1 - b), 1 + b] (likewise contrast and saturation) and hue in [-hue, hue] (hue <= 0.5), applied
// in a random order; 0 turns an adjustment off. Images with 3 channels (RGB); grey images (1 channel)
// get brightness and contrast only, as torchvision does. Throws at construction for negative values or
// hue > 0.5.
data::Transform ColorJitter(double brightness = 0, double contrast = 0, double saturation = 0, double hue = 0);

// The deterministic cores, for tests and for callers that choose their own parameters.
namespace detail {
// Image size {H, W} in either layout; throws (naming `op`) for anything that is not an image.
std::array<int64_t, 2> image_size(const char* op, const Tensor& image);
// Resize to exactly {height, width}.
Tensor resize(const Tensor& image, int64_t height, int64_t width);
// The {height, width} Resize(size) gives an image of {h, w}.
std::array<int64_t, 2> resize_output_size(int64_t h, int64_t w, IntArrayRef size);
// The window [top, top + height) x [left, left + width); parts outside the image are zeros.
Tensor crop(const Tensor& image, int64_t top, int64_t left, int64_t height, int64_t width);
Tensor center_crop(const Tensor& image, int64_t height, int64_t width);
// crop then resize, torchvision's F.resized_crop.
Tensor resized_crop(const Tensor& image, int64_t top, int64_t left, int64_t height, int64_t width,
                    int64_t out_height, int64_t out_width);
// RandomResizedCrop's box {top, left, height, width} for an image of {h, w}.
std::array<int64_t, 4> random_resized_crop_box(int64_t h, int64_t w, std::array<double, 2> scale,
                                               std::array<double, 2> ratio, Generator& gen);
// torchvision's adjust_brightness / adjust_contrast / adjust_saturation (factor >= 0) and adjust_hue
// (factor in [-0.5, 0.5]).
Tensor adjust_brightness(const Tensor& image, double factor);
Tensor adjust_contrast(const Tensor& image, double factor);
Tensor adjust_saturation(const Tensor& image, double factor);
Tensor adjust_hue(const Tensor& image, double factor);
// The four adjustments in `order` (indices 0 brightness, 1 contrast, 2 saturation, 3 hue), each with
// factors[index].
Tensor color_jitter(const Tensor& image, std::array<int, 4> order, std::array<double, 4> factors);
// One of them: index 0..3 as above, with factors[index].
Tensor adjust_one(const Tensor& image, int index, const std::array<double, 4>& factors);
}  // namespace detail

}  // namespace cohort::data::transforms
