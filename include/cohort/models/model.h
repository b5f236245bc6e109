// The model zoo (torchvision.models for cohort): image classifiers by name, for `cohort train`,
// the benchmarks and the data-parallel tests.
//
//   auto net = models::create("resnet18", models::ModelOptions().num_classes(10));
//   Tensor logits = net->forward(images);          // [N, 3, 32, 32] -> [N, 10]
//   auto replica = net->clone_model(Device("cpu:1"));  // same values, its own tensors
//
// Every model is an nn::Module (parameters by name, state_dict, train/eval, to(device), printing)
// with one virtual forward from an image batch [N, in_channels, H, W] to logits [N, num_classes],
// so callers that know only the name can run it, put it in an nn::Sequential, or replicate it.
// Names: lenet, blitz-cnn, resnet18, resnet34, resnet50, mlp, char-lstm, char-transformer (see
// names(); the last two are character language models: int64 ids [N, T] in, logits [N * T, V] out). How to add one: src/models/README.md.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cohort/nn/module.h"

namespace cohort::models {

// The shape of the task: input images [N, in_channels, image_size, image_size], num_classes logits.
// Defaults are CIFAR-10's; MNIST is ModelOptions().in_channels(1).image_size(28).
struct ModelOptions {
  ModelOptions& in_channels(int64_t v) { in_channels_ = v; return *this; }
  ModelOptions& num_classes(int64_t v) { num_classes_ = v; return *this; }
  ModelOptions& image_size(int64_t v) { image_size_ = v; return *this; }
  int64_t in_channels() const { return in_channels_; }
  int64_t num_classes() const { return num_classes_; }
  int64_t image_size() const { return image_size_; }

 private:
  int64_t in_channels_ = 3;
  int64_t num_classes_ = 10;
  int64_t image_size_ = 32;
};

// Prints "ModelOptions(in_channels=3, num_classes=10, image_size=32)".
std::ostream& operator<<(std::ostream& os, const ModelOptions& options);

// The base of every zoo model. A model builds its layers in its constructor from `options` and
// reports its registry name as arch(), so create(arch(), options) builds the same architecture.
class Model : public nn::Module {
 public:
  // Throws cohort::Error, prefixed with `arch`, when an option is not positive.
  Model(std::string arch, const ModelOptions& options);

  // [N, in_channels, H, W] -> [N, num_classes]. Models with a flatten check H = W = image_size.
  virtual Tensor forward(const Tensor& x) = 0;
  // forward, with the module's forward hooks (as nn::ModuleHolder's operator() runs them).
  Tensor operator()(const Tensor& x);

  const std::string& arch() const { return arch_; }
  const ModelOptions& options() const { return options_; }

  // A newly built model of the same architecture and options (fresh initial values); the one line
  // each model writes, e.g. `return std::make_shared<LeNet>(options());`.
  virtual std::shared_ptr<Model> create_fresh() const = 0;

  // A deep copy: create_fresh(), then this model's state_dict, requires_grad flags and train/eval
  // mode, on `device` (default: this model's device) with this model's dtype. The default
  // generator's state is restored afterwards, so cloning never shifts the random stream the caller
  // seeded (replicas are built after manual_seed); for the same reason it must not run while
  // another thread draws from the default generator. Forward hooks are not copied.
  std::shared_ptr<Model> clone_model(const std::optional<Device>& device = std::nullopt) const;
  // nn::Module's clone, with clone_model's result.
  std::shared_ptr<nn::Module> clone(const std::optional<Device>& device = std::nullopt) const final;

 protected:
  // Throws cohort::Error "<arch>: expected input [N, C, S, S], got <shape>; hint: ..." unless x is
  // [N, in_channels, H, W], with H = W = image_size when exact_size (models with a flatten).
  void check_input(const Tensor& x, bool exact_size) const;

 private:
  std::string arch_;
  ModelOptions options_;
};

// The model registered as `name`, newly initialised (from the default generator: manual_seed
// first for repeatable weights). Throws cohort::Error for an unknown name (listing the known ones)
// and for options the architecture cannot take (e.g. lenet below its minimum image_size).
std::shared_ptr<Model> create(const std::string& name, const ModelOptions& options = {});

// The registered names, in the order `cohort train --help` lists them.
std::vector<std::string> names();

}  // namespace cohort::models
