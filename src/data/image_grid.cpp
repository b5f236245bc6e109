// make_grid follows torchvision.utils.make_grid (0.14) line by line, so that a grid saved by cohort
// and one saved by PyTorch from the same batch are the same picture.
#include "cohort/data/image_grid.h"

#include <algorithm>

#include "cohort/ops/creation.h"

namespace cohort::data {

Tensor make_grid(const Tensor& batch, int64_t nrow, int64_t padding, bool normalize, double pad_value) {
  COHORT_CHECK(batch.defined(), "make_grid: the batch is an undefined tensor");
  COHORT_CHECK(batch.is_floating_point(), "make_grid: expected a float32 or float64 batch, got ", batch.dtype(),
               "; hint: convert with .to(kFloat32) / 255");
  COHORT_CHECK(batch.dim() == 4, "make_grid: expected a batch [B, C, H, W], got ", batch.sizes(),
               batch.dim() == 3 ? "; hint: a single image [C, H, W] needs unsqueeze(0)" : "");
  const int64_t b = batch.size(0), c = batch.size(1), h = batch.size(2), w = batch.size(3);
  COHORT_CHECK(c == 1 || c == 3, "make_grid: expected 1 or 3 channels, got ", batch.sizes());
  COHORT_CHECK(b >= 1, "make_grid: the batch is empty, got ", batch.sizes());
  COHORT_CHECK(nrow >= 1, "make_grid: nrow must be at least 1, got ", nrow);
  COHORT_CHECK(padding >= 0, "make_grid: padding must be non-negative, got ", padding);

  // A picture, not part of a graph.
  Tensor images = batch.detach();
  if (c == 1) images = images.expand({b, 3, h, w});
  if (normalize) {
    const double lo = images.min().item<double>(), hi = images.max().item<double>();
    images = (images - lo) / std::max(hi - lo, 1e-5);
  }
  if (b == 1) return images[0].contiguous();

  const int64_t cols = std::min(nrow, b);
  const int64_t rows = (b + cols - 1) / cols;
  const int64_t cell_h = h + padding, cell_w = w + padding;
  Tensor grid = full({3, rows * cell_h + padding, cols * cell_w + padding}, pad_value, batch.options());
  for (int64_t k = 0; k < b; ++k) {
    const int64_t row = k / cols, col = k % cols;
    grid.narrow(1, row * cell_h + padding, h).narrow(2, col * cell_w + padding, w).copy_(images[k]);
  }
  return grid;
}

Tensor to_uint8_hwc(const Tensor& chw_float) {
  COHORT_CHECK(chw_float.defined(), "to_uint8_hwc: the image is an undefined tensor");
  COHORT_CHECK(chw_float.is_floating_point() && chw_float.dim() == 3,
               "to_uint8_hwc: expected a float32 or float64 image [C, H, W], got ", chw_float.toString());
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

}  // namespace cohort::data
