// Per-sample transforms of an example's data, torchvision's names and meanings, for cohort's DataLoader
// (the image ones, Resize, CenterCrop, RandomResizedCrop and ColorJitter: data/vision_transforms.h).
// Each is a data::Transform; random ones draw only from the Generator they are called with, so a seed
// fixes the result. Normalize is also libtorch's transforms::Normalize<Target>, usable in a dataset's
// .map() (libtorch's other transforms: data/batch_transforms.h, data/stack.h).
//
//   auto t = data::transforms::Compose({data::transforms::ToTensor(),
//                                       data::transforms::RandomCrop(32, 4),
//                                       data::transforms::RandomHorizontalFlip(),
//                                       data::transforms::Normalize({0.49, 0.48, 0.45}, {0.25, 0.24, 0.26})});
//   Tensor x = t(cifar.get(i).data, gen);   // float32 [3, 32, 32]
//
// Shapes: H height, W width, C channels. Every transform returns a new tensor unless noted, and
// never writes to its input (dataset inputs are views into the whole set).
#pragma once

#include <cstdint>
#include <vector>

#include "cohort/core/array_ref.h"
#include "cohort/core/generator.h"
#include "cohort/core/tensor.h"
#include "cohort/data/batch_transforms.h"
#include "cohort/data/dataset.h"

namespace cohort::data::transforms {

// uint8 [H, W, C] (HWC, as datasets store images) or uint8 [H, W] -> float32 [C, H, W] with values
// v / 255 in [0, 1]. A float32 or float64 input of 3 dims is taken to be CHW already and returned
// unchanged. Throws cohort::Error for other dtypes or dims.
data::Transform ToTensor();

namespace detail {
// Normalize's parts: the checked parameters as float32 [C, 1, 1], and the two ways of applying them.
Tensor normalize_parameter(ArrayRef<double> mean, ArrayRef<double> stddev, bool is_mean);
Tensor normalize_broadcast(const Tensor& input, const Tensor& mean, const Tensor& stddev);
Tensor normalize_chw(const Tensor& input, const std::vector<double>& mean, const std::vector<double>& stddev);
}  // namespace detail

// (x - mean[c]) / std[c] per channel c, one class for both APIs:
//   - libtorch's TensorTransform: ds.map(Normalize<>(0.1307, 0.3081)) or Normalize<>({m0, m1, m2}, {s0, s1, s2})
//     computes input.sub(mean).div(stddev) with the public members mean, stddev float32 [C, 1, 1],
//     broadcasting as libtorch does (one value: any shape; C values: [..., C, H, W]);
//   - cohort's data::Transform: Compose({ToTensor(), Normalize({0.49, 0.48, 0.45}, {0.25, 0.24, 0.26})})
//     takes a float [C, H, W] with C = the number of means, computed in the input's dtype, and throws
//     when called on anything else.
// Throws at construction when mean and std are empty or differ in length, or a std is 0 (libtorch
// would divide by zero).
template <typename Target = Tensor>
struct Normalize : public TensorTransform<Target> {
  Normalize(ArrayRef<double> mean, ArrayRef<double> stddev)
      : mean(detail::normalize_parameter(mean, stddev, true)),
        stddev(detail::normalize_parameter(mean, stddev, false)),
        mean_(mean.vec()),
        stddev_(stddev.vec()) {}

  Tensor operator()(Tensor input) override { return detail::normalize_broadcast(input, mean, stddev); }
  Tensor operator()(const Tensor& input, Generator&) const { return detail::normalize_chw(input, mean_, stddev_); }

  Tensor mean, stddev;

 private:
  std::vector<double> mean_, stddev_;  // float64, for cohort's transform on float64 images
};

// Pads H and W with `padding` zeros on every side, then crops a random size x size window (top
// and left uniform over every position that fits). Input [..., H, W], any dtype, e.g. CHW float.
// Throws when the padded image is smaller than `size`.
data::Transform RandomCrop(int64_t size, int64_t padding = 0);

// Reverses W with probability p (returning the input itself otherwise): W is the last dim of an
// [..., H, W] tensor, except in a uint8 [H, W, C] image (the layout of datasets and io::read_image).
// Throws at construction when p is outside [0, 1].
data::Transform RandomHorizontalFlip(double p = 0.5);

// Applies the transforms in order. Throws at construction when one of them is empty.
data::Transform Compose(std::vector<data::Transform> transforms);

}  // namespace cohort::data::transforms

#include "cohort/data/vision_transforms.h"  // Resize, CenterCrop, RandomResizedCrop, ColorJitter
