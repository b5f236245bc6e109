// A batch of images tiled into one picture, as torchvision.utils.make_grid does (io::write_png saves
// it; io::to_uint8_hwc gives its 8-bit form).
//
//   io::write_png("batch.png", data::make_grid(images, /*nrow=*/8));   // images [B, C, H, W]
#pragma once

#include <cstdint>

#include "cohort/core/tensor.h"

namespace cohort::data {

// Tiles batch [B, C, H, W] (float32 or float64, C = 1 or 3; grey images are repeated into 3
// channels) row by row, nrow images per row, into [3, rows * (H + padding) + padding,
// cols * (W + padding) + padding] of the batch's dtype, where cols = min(nrow, B) and
// rows = ceil(B / cols). Image k sits at row k / cols, column k % cols, its top-left corner at
// (padding + row * (H + padding), padding + column * (W + padding)); everything else, including the
// cells after the last image, is pad_value. normalize rescales the whole batch by its min and max,
// (x - min) / max(max - min, 1e-5), before tiling; pad_value is not rescaled.
// As in torchvision, a batch of one image returns that image (3-channel) without any padding.
// Throws a cohort::Error for another rank, dtype or channel count, nrow < 1 or padding < 0.
Tensor make_grid(const Tensor& batch, int64_t nrow = 8, int64_t padding = 2, bool normalize = false,
                 double pad_value = 0);

}  // namespace cohort::data
