// cohort: tensors, autograd, neural networks and data parallelism in C++.
// The umbrella header for users; library code includes only what it uses.
#pragma once

#include "cohort/autograd/engine.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/autograd/node.h"
#include "cohort/autograd/record.h"
#include "cohort/core/device.h"
#include "cohort/core/dtype.h"
#include "cohort/core/error.h"
#include "cohort/core/generator.h"
#include "cohort/core/scalar.h"
#include "cohort/core/tensor.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/indexing.h"
#include "cohort/ops/linalg.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/shape.h"
#include "cohort/nn/init.h"
#include "cohort/nn/linear.h"
#include "cohort/nn/module.h"
#include "cohort/nn/module_holder.h"
