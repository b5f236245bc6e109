// What the backward engine is doing on this thread (for SavedTensor::unpack).
#pragma once

#include "cohort/autograd/node.h"

namespace cohort::autograd {

// The node whose backward runs on this thread, or null.
Node* current_node();

}  // namespace cohort::autograd
