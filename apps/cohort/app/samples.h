// The picture of test predictions that the trainer leaves beside its report: a grid of test images,
// each with its true class and the network's prediction written under it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cohort/core/tensor.h"
#include "cohort/models/model.h"

#include "app/data_setup.h"

namespace cohort::app {

// Writes a PNG (atomically, through io::write_png) of images [N, C, H, W] (float, values in [0, 1],
// C = 1 or 3) in rows of up to 8 cells on white. Each image is enlarged s = max(1, 96 / max(H, W))
// times by nearest neighbour (x3 for 28x28 and 32x32) and captioned with two lines: its true class in
// grey, then the predicted class in green when right, red when wrong. Labels are names from
// class_names, or numbers when it is empty, drawn at font scale 2 (1 when a label would be wider than
// 160 pixels). A cell is max(s W, widest label) + 12 pixels wide and s H + 16 + 24 * font scale tall.
// Throws a cohort::Error for a bad shape, label counts that differ from N, or a label outside
// [0, class_names.size()).
void write_samples_png(const std::string& path, const Tensor& images_nchw_float01, const std::vector<int64_t>& truth,
                       const std::vector<int64_t>& predicted, const std::vector<std::string>& class_names);

// Up to k indices of `dataset`, spread across its classes: of its first `scanned` samples, each
// class's first (in class order), then each class's second, and so on. A test set sorted by class, as
// an image folder's is, would otherwise show its first class only.
std::vector<int64_t> spread_across_classes(const data::IndexedDataset& dataset, int64_t k, int64_t scanned = 512);

// 32 test images of `data` (spread_across_classes; all of them when fewer) with `model`'s
// predictions, written to `path` by write_samples_png. Runs the model in eval mode without autograd, then sets it back to
// training mode.
void write_prediction_samples(const std::string& path, models::Model& model, const DataSetup& data);

}  // namespace cohort::app
