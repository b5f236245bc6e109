// MNIST and Fashion-MNIST: 28x28 grey images in the IDX format, plain or gzipped.
//
//   data::FashionMNIST train("/usr/share/datasets/fashion-mnist");   // 60000 examples
//   data::Example<> e = train.get(0);   // data uint8 [28, 28, 1] (HWC), target int64 0-d
//   // data::transforms::ToTensor() turns the input into float32 [1, 28, 28] in [0, 1].
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cohort/core/tensor.h"
#include "cohort/core/optional.h"
#include "cohort/data/batch_dataset.h"
#include "cohort/data/dataset.h"

namespace cohort::data {

// Reads an IDX file of unsigned bytes (magic 0x00 0x00 0x08 <ndims>, then ndims big-endian uint32
// sizes, then the data), plain or gzipped when the name ends in ".gz". Returns a uint8 tensor with
// the file's dims. Throws cohort::Error naming the file when it is missing, is not IDX, holds another
// element type, or holds fewer or more data bytes than its dims declare.
Tensor read_idx(const std::string& path);

// MNIST from `root`, which holds train-images-idx3-ubyte and train-labels-idx1-ubyte (train = true)
// or t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte (train = false), each plain or with ".gz"
// (the plain file wins when both exist). All data is loaded in the constructor. Throws cohort::Error
// naming the file when a file is missing or malformed, the images are not 28x28, the label and image
// counts differ, or a label is not a class index.
class MNIST : public IndexedDataset {
 public:
  explicit MNIST(const std::string& root, bool train = true);

  int64_t size() const override;
  // data: uint8 [28, 28, 1], a view into images() (no copy); target: int64 0-d.
  // Throws cohort::IndexError outside [0, size()).
  Example<> get(int64_t index) const override;
  std::vector<std::string> classes() const override { return classes_; }

  // The whole set, for fast paths: uint8 [N, 28, 28, 1] and int64 [N].
  const Tensor& images() const { return images_; }
  const Tensor& labels() const { return labels_; }
  bool is_train() const { return train_; }

 protected:
  // `name` starts error messages ("FashionMNIST: ..."); classes are the label names.
  MNIST(const std::string& root, bool train, std::string name, std::vector<std::string> classes);

 private:
  std::string name_;
  bool train_;
  std::vector<std::string> classes_;
  Tensor images_, labels_;
};

// Fashion-MNIST (Zalando): MNIST's files and layout, clothing classes
// T-shirt/top, Trouser, Pullover, Dress, Coat, Sandal, Shirt, Sneaker, Bag, Ankle boot.
// Debian's dataset-fashion-mnist installs it in /usr/share/datasets/fashion-mnist.
class FashionMNIST : public MNIST {
 public:
  explicit FashionMNIST(const std::string& root, bool train = true);
};

namespace datasets {

// libtorch's MNIST (torch::data::datasets::MNIST) on cohort's reader: the same files (plain or .gz,
// which libtorch cannot read), images float32 [1, 28, 28] in [0, 1] (byte / 255), targets int64 0-d.
//   auto train = data::datasets::MNIST(root).map(data::transforms::Stack<>());   // Mode::kTrain
// Throws cohort::Error naming the file as data::MNIST does; get() throws cohort::IndexError
// outside [0, size()).
class MNIST : public Dataset<MNIST> {
 public:
  enum class Mode { kTrain, kTest };

  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain);

  Example<> get(size_t index) override;
  optional<size_t> size() const override;
  bool is_train() const noexcept { return train_; }
  // The whole set: float32 [N, 1, 28, 28] and int64 [N].
  const Tensor& images() const { return images_; }
  const Tensor& targets() const { return targets_; }

 private:
  Tensor images_, targets_;
  bool train_;
};

}  // namespace datasets

}  // namespace cohort::data
