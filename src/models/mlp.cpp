// A three-layer perceptron on flattened images (see cohort/models/mlp.h).
#include "cohort/models/mlp.h"

#include "cohort/nn/functional/activation.h"

namespace cohort::models {

namespace F = nn::functional;

MLP::MLP(const ModelOptions& options) : Model("mlp", options) {
  const int64_t features = options.in_channels() * options.image_size() * options.image_size();
  fc1 = register_module("fc1", nn::Linear(features, 256));
  fc2 = register_module("fc2", nn::Linear(256, 128));
  fc3 = register_module("fc3", nn::Linear(128, options.num_classes()));
}

Tensor MLP::forward(const Tensor& input) {
  check_input(input, /*exact_size=*/true);
  Tensor x = F::relu(fc1(input.flatten(1)));
  x = F::relu(fc2(x));
  return fc3(x);
}

std::shared_ptr<Model> MLP::create_fresh() const { return std::make_shared<MLP>(options()); }

}  // namespace cohort::models
