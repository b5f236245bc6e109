// LeNet-5 as in the 60-minute blitz's first network ("lenet" in models::create):
//   conv(in_channels, 6, 5) relu maxpool 2 -> conv(6, 16, 5) relu maxpool 2 -> flatten
//   -> linear(16 k k, 120) relu -> linear(120, 84) relu -> linear(84, num_classes)
// with k = lenet_feature_size(image_size) (28 -> 4, 32 -> 5). Parameters conv1, conv2, fc1, fc2,
// fc3 (weight and bias each), as in the blitz and PyTorch's usual LeNet, so state dicts map by name.
//   auto net = std::make_shared<models::LeNet>(models::ModelOptions().in_channels(1).image_size(28));
//   Tensor logits = net->forward(x);   // x [N, 1, 28, 28] -> [N, 10]
#pragma once

#include "cohort/models/model.h"
#include "cohort/nn/conv.h"
#include "cohort/nn/linear.h"

namespace cohort::models {

// The side k of the 16 x k x k feature map that two (5x5 conv, 2x2 max pool) stages leave of an
// image_size x image_size image. Throws cohort::Error, prefixed with `arch`, below 16 (the smallest
// size whose second pool still has a 2x2 window).
int64_t lenet_feature_size(int64_t image_size, const std::string& arch = "lenet");

class LeNet : public Model {
 public:
  explicit LeNet(const ModelOptions& options = {});
  // [N, in_channels, image_size, image_size] -> [N, num_classes]; checks the input shape.
  Tensor forward(const Tensor& x) override;
  std::shared_ptr<Model> create_fresh() const override;

  nn::Conv2d conv1{nullptr}, conv2{nullptr};
  nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};

}  // namespace cohort::models
