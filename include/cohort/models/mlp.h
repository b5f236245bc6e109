// A three-layer perceptron on flattened images ("mlp" in models::create):
//   flatten -> linear(in_channels * image_size^2, 256) relu -> linear(256, 128) relu
//   -> linear(128, num_classes)
// Parameters fc1, fc2, fc3 (weight and bias each).
//   auto net = models::create("mlp", models::ModelOptions().in_channels(1).image_size(28));
//   Tensor logits = net->forward(x);   // x [N, 1, 28, 28] -> [N, 10]
#pragma once

#include "cohort/models/model.h"
#include "cohort/nn/linear.h"

namespace cohort::models {

class MLP : public Model {
 public:
  explicit MLP(const ModelOptions& options = {});
  // [N, in_channels, image_size, image_size] -> [N, num_classes]; checks the input shape.
  Tensor forward(const Tensor& x) override;
  std::shared_ptr<Model> create_fresh() const override;

  nn::Linear fc1{nullptr}, fc2{nullptr}, fc3{nullptr};
};

}  // namespace cohort::models
