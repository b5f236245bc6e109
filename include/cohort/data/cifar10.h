// CIFAR-10: 32x32 colour images in ten classes, from the "binary version" batches.
//
//   data::CIFAR10 train("/data/cifar10");   // root or root/cifar-10-batches-bin holds the .bin files
//   data::Example<> e = train.get(0);        // data uint8 [32, 32, 3] (HWC), target int64 0-d
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cohort/core/tensor.h"
#include "cohort/data/dataset.h"

namespace cohort::data {

// Reads data_batch_1.bin ... data_batch_5.bin (train = true, 50000 images) or test_batch.bin
// (train = false, 10000 images). Each record is one label byte then 3072 bytes: the 32x32 red,
// green and blue planes. Each file may also be gzipped (".bin.gz"). The files are looked for in
// `root`, then in root/cifar-10-batches-bin (where the archive unpacks). All data is loaded and
// converted to HWC in the constructor. Throws cohort::Error naming the file when a file is missing,
// its size is not a whole number of records, or a label is not a class index.
class CIFAR10 : public IndexedDataset {
 public:
  explicit CIFAR10(const std::string& root, bool train = true);

  int64_t size() const override;
  // data: uint8 [32, 32, 3], a view into images() (no copy); target: int64 0-d.
  // Throws cohort::IndexError outside [0, size()).
  Example<> get(int64_t index) const override;
  // airplane, automobile, bird, cat, deer, dog, frog, horse, ship, truck.
  std::vector<std::string> classes() const override;

  // The whole set, for fast paths: uint8 [N, 32, 32, 3] (HWC) and int64 [N].
  const Tensor& images() const { return images_; }
  const Tensor& labels() const { return labels_; }
  bool is_train() const { return train_; }

 private:
  bool train_;
  Tensor images_, labels_;
};

}  // namespace cohort::data
