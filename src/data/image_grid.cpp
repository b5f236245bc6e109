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

}  // namespace cohort::data
