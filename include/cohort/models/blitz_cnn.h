// The 60-minute blitz's CIFAR-10 classifier ("blitz-cnn" in models::create), layer for layer:
//   conv1 = conv(in_channels, 6, 5); pool = maxpool(2, 2); conv2 = conv(6, 16, 5);
//   fc1 = linear(16 k k, 120); fc2 = linear(120, 84); fc3 = linear(84, num_classes)
//   forward: pool(relu(conv1 x)) -> pool(relu(conv2 x)) -> view(-1, 16 k k) -> relu fc1 -> relu fc2 -> fc3
// The blitz has in_channels 3, image_size 32 (k = 5) and 10 classes; k = lenet_feature_size(image_size).
// Its parameters (names, shapes, order) and its function are LeNet's: the two differ only in the
// module tree, where the blitz registers one MaxPool2d module ("pool") and uses it twice, so the
// blitz's printed model and hooks on `pool` carry over. Both names are kept: scripts use either.
//   auto net = models::create("blitz-cnn");   // x [N, 3, 32, 32] -> [N, 10]
#pragma once

#include "cohort/models/model.h"
#include "cohort/nn/conv.h"
#include "cohort/nn/linear.h"
#include "cohort/nn/pooling.h"

namespace cohort::models {

class BlitzCNN : public Model {
 public:
  explicit BlitzCNN(const ModelOptions& options = {});
  // [N, in_channels, image_size, image_size] -> [N, num_classes]; checks the input shape.
  Tensor forward(const Tensor& x) override;
  std::shared_ptr<Model> create_fresh() const override;

  nn::Conv2d conv1{nullptr};
  nn::MaxPool2d pool{nullptr};
  nn::Conv2d conv2{nullptr};
  nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};

 private:
  int64_t flat_features_;  // 16 k k
};

}  // namespace cohort::models
