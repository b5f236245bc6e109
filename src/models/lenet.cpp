// LeNet-5: two conv-relu-pool stages and three linear layers (see cohort/models/lenet.h).
#include "cohort/models/lenet.h"

#include "cohort/core/error.h"
#include "cohort/nn/functional/activation.h"
#include "cohort/nn/functional/pooling.h"

namespace cohort::models {

namespace F = nn::functional;

int64_t lenet_feature_size(int64_t image_size, const std::string& arch) {
  // Each stage: a 5x5 convolution without padding (-4), then a 2x2 max pool (halves, rounding down).
  // The second pool needs at least 2 rows: (s - 4) / 2 - 4 >= 2, i.e. s >= 16.
  constexpr int64_t kMinImageSize = 16;
  COHORT_CHECK(image_size >= kMinImageSize, arch, ": image_size must be at least ", kMinImageSize,
               " (two 5x5 convolutions and two 2x2 max pools), got ", image_size,
               "; hint: resize the images, or use resnet18 or mlp, which take smaller ones");
  return ((image_size - 4) / 2 - 4) / 2;
}

LeNet::LeNet(const ModelOptions& options) : Model("lenet", options) {
  const int64_t k = lenet_feature_size(options.image_size(), arch());
  conv1 = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(options.in_channels(), 6, 5)));
  conv2 = register_module("conv2", nn::Conv2d(nn::Conv2dOptions(6, 16, 5)));
  fc1 = register_module("fc1", nn::Linear(16 * k * k, 120));
  fc2 = register_module("fc2", nn::Linear(120, 84));
  fc3 = register_module("fc3", nn::Linear(84, options.num_classes()));
}

Tensor LeNet::forward(const Tensor& input) {
  check_input(input, /*exact_size=*/true);
  Tensor x = F::max_pool2d(F::relu(conv1(input)), F::MaxPool2dFuncOptions(2));
  x = F::max_pool2d(F::relu(conv2(x)), F::MaxPool2dFuncOptions(2));
  x = x.flatten(1);
  x = F::relu(fc1(x));
  x = F::relu(fc2(x));
  return fc3(x);
}

std::shared_ptr<Model> LeNet::create_fresh() const { return std::make_shared<LeNet>(options()); }

}  // namespace cohort::models
