// The blitz's CIFAR-10 network, in the blitz's own layer order (see cohort/models/blitz_cnn.h).
#include "cohort/models/blitz_cnn.h"

#include "cohort/models/lenet.h"
#include "cohort/nn/functional/activation.h"

namespace cohort::models {

namespace F = nn::functional;

BlitzCNN::BlitzCNN(const ModelOptions& options) : Model("blitz-cnn", options) {
  const int64_t k = lenet_feature_size(options.image_size(), arch());
  flat_features_ = 16 * k * k;
  // Registration order is the blitz's __init__ order, which is what printing shows.
  conv1 = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(options.in_channels(), 6, 5)));
  pool = register_module("pool", nn::MaxPool2d(nn::MaxPool2dOptions(2).stride(2)));
  conv2 = register_module("conv2", nn::Conv2d(nn::Conv2dOptions(6, 16, 5)));
  fc1 = register_module("fc1", nn::Linear(flat_features_, 120));
  fc2 = register_module("fc2", nn::Linear(120, 84));
  fc3 = register_module("fc3", nn::Linear(84, options.num_classes()));
}

Tensor BlitzCNN::forward(const Tensor& input) {
  check_input(input, /*exact_size=*/true);
  Tensor x = pool(F::relu(conv1(input)));
  x = pool(F::relu(conv2(x)));
  x = x.view({-1, flat_features_});
  x = F::relu(fc1(x));
  x = F::relu(fc2(x));
  return fc3(x);
}

std::shared_ptr<Model> BlitzCNN::create_fresh() const { return std::make_shared<BlitzCNN>(options()); }

}  // namespace cohort::models
