// Per-sample input transforms, torchvision's names and meanings. Each returns a data::Transform;
// random ones draw only from the Generator they are called with, so a seed fixes the result.
//
//   auto t = data::transforms::Compose({data::transforms::ToTensor(),
//                                       data::transforms::RandomCrop(32, 4),
//                                       data::transforms::RandomHorizontalFlip(),
//                                       data::transforms::Normalize({0.49, 0.48, 0.45}, {0.25, 0.24, 0.26})});
//   Tensor x = t(cifar.get(i).input, gen);   // float32 [3, 32, 32]
//
// Shapes: H height, W width, C channels. Every transform returns a new tensor unless noted, and
// never writes to its input (dataset inputs are views into the whole set).
#pragma once

#include <cstdint>
#include <vector>

#include "cohort/data/dataset.h"

namespace cohort::data::transforms {

// uint8 [H, W, C] (HWC, as datasets store images) or uint8 [H, W] -> float32 [C, H, W] with values
// v / 255 in [0, 1]. A float32 or float64 input of 3 dims is taken to be CHW already and returned
// unchanged. Throws cohort::Error for other dtypes or dims.
Transform ToTensor();

// (x - mean[c]) / std[c] for each channel c of a float [C, H, W] tensor, computed in the input's
// dtype. Throws at construction when mean and std differ in length or a std is 0, and when called
// on a tensor that is not float CHW or whose C differs from the number of means.
Transform Normalize(std::vector<double> mean, std::vector<double> std);

// Pads H and W with `padding` zeros on every side, then crops a random size x size window (top
// and left uniform over every position that fits). Input [..., H, W], any dtype, e.g. CHW float.
// Throws when the padded image is smaller than `size`.
Transform RandomCrop(int64_t size, int64_t padding = 0);

// Reverses W of an [..., H, W] tensor with probability p (returning the input itself otherwise).
// Throws at construction when p is outside [0, 1].
Transform RandomHorizontalFlip(double p = 0.5);

// Applies the transforms in order. Throws at construction when one of them is empty.
Transform Compose(std::vector<Transform> transforms);

}  // namespace cohort::data::transforms
