// `cohort train --init-from FILE --freeze PATTERN`: start from trained weights, train only some.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "cohort/core/tensor.h"
#include "cohort/nn/module.h"

namespace cohort::app {

// Copies the weights of `file` into `model`: a PyTorch torch.save(model.state_dict()) file
// (io::load_pytorch_state_dict; a "module." prefix on every key, from a model saved inside
// DataParallel, is stripped and a line on `log` says so), a cohort run directory or checkpoint (its "model/..." tensors), or a
// safetensors file of a state dict (io::save). Names must match the model's exactly, else the error
// says whose weights the file holds (a checkpoint's model, or a few of its names) and which names
// differ; a tensor whose shape differs (a classifier for another number of classes) keeps its fresh
// initial value and is returned, and a line on `log` names it. A NaN or infinity in the file is
// refused, naming the tensor. Throws a cohort::Error naming the file and `model_name` (the model's
// class name when empty).
std::vector<std::string> init_from(nn::Module& model, const std::string& file, std::ostream& log,
                                   const std::string& model_name = "");

// Whether `name` matches one of `patterns`: comma-separated globs where '*' is any run of characters
// (dots included) and '?' one character, matched against the whole dotted name ("conv*",
// "layer1.*,layer2.*", "*.bias").
bool matches_freeze(const std::string& name, const std::string& patterns);

// Sets requires_grad false on every parameter whose name matches `patterns` and returns the others,
// for the optimizer. Throws a UsageError naming --freeze when a pattern matches nothing or everything,
// or when it would freeze a parameter in `not_loaded` (it would stay at its random initial value).
std::vector<Tensor> freeze(nn::Module& model, const std::string& patterns, const std::vector<std::string>& not_loaded);

}  // namespace cohort::app
