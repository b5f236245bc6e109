// The Python that rebuilds a zoo model as a torch.nn module and loads a state dict that
// `cohort export --pytorch` wrote: printed by the command for the user to copy.
#pragma once

#include <string>

#include "cohort/models/model.h"

#include "app/data_spec.h"

namespace cohort::app {

// Lines of Python (each ending in "\n", no indentation of their own) that import torch, build the
// torch.nn module whose state dict keys and shapes are `model`'s and whose forward computes what
// cohort's does, load `file` into it strictly and put it in eval mode, leaving it in a variable
// `model`; comments and a `mean, std` line say what input it takes (the data's normalisation is not
// part of the model). Per model: lenet, blitz-cnn, mlp, char-lstm and char-transformer as a short
// class; the ResNets as torchvision's, with the stem replaced where cohort's differs. A model with
// no short equivalent gets comments listing its state dict's keys and shapes instead, and no code
// that builds anything; `has_module` (when given) says which of the two was written.
//   std::cout << pytorch_snippet(*model, data, "model.pt");
std::string pytorch_snippet(const models::Model& model, const DataSpec& data, const std::string& file,
                            bool* has_module = nullptr);

// `text` as a Python str literal in double quotes: backslash, quote and control bytes escaped.
std::string python_string(const std::string& text);

}  // namespace cohort::app
