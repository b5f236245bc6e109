// cohort: tensors, autograd, neural networks and data parallelism in C++.
// The umbrella header for users; library code includes only what it uses.
#pragma once

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "cohort needs C++17 or later: compile with -std=c++17 (CMake: link cohort::cohort, which asks for it, or set CMAKE_CXX_STANDARD 17)"
#else  // the headers only under C++17, so that this error is the only one (#endif at the end)

// What <torch/torch.h> brings along, so that ported programs find it too.
#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

// core: tensors, dtypes, devices, errors, random generators, threads
#include "cohort/core/device.h"
#include "cohort/core/dtype.h"
#include "cohort/core/enum.h"
#include "cohort/core/error.h"
#include "cohort/core/expanding_array.h"
#include "cohort/core/generator.h"
#include "cohort/core/ivalue.h"
#include "cohort/core/libtorch_names.h"
#include "cohort/core/optional.h"
#include "cohort/core/scalar.h"
#include "cohort/core/tensor.h"
#include "cohort/core/cpu_budget.h"
#include "cohort/core/threads.h"

// ops: every tensor operation as libtorch's free functions (creation, indexing, linear algebra,
// pointwise, activations, dropout, reductions, shapes, convolution, pooling, normalisation, losses,
// embedding, optimizer steps), the compute backends
#include "cohort/ops/activation.h"
#include "cohort/ops/autocast.h"
#include "cohort/ops/backend.h"
#include "cohort/ops/convolution.h"
#include "cohort/ops/copy.h"
#include "cohort/ops/creation.h"
#include "cohort/ops/dropout.h"
#include "cohort/ops/embedding.h"
#include "cohort/ops/feature_dropout.h"
#include "cohort/ops/fold.h"
#include "cohort/ops/grid_sample.h"
#include "cohort/ops/indexing.h"
#include "cohort/ops/interpolate.h"
#include "cohort/ops/linalg.h"
#include "cohort/ops/loss.h"
#include "cohort/ops/normalization.h"
#include "cohort/ops/optimizer_step.h"
#include "cohort/ops/padding.h"
#include "cohort/ops/pixel_shuffle.h"
#include "cohort/ops/pointwise.h"
#include "cohort/ops/pooling.h"
#include "cohort/ops/reduction.h"
#include "cohort/ops/reduction_mode.h"
#include "cohort/ops/reorder.h"
#include "cohort/ops/rnn.h"
#include "cohort/ops/scatter.h"
#include "cohort/ops/shape.h"
#include "cohort/ops/softmax.h"
#include "cohort/ops/sorting.h"
#include "cohort/ops/unique.h"

// autograd: the backward engine, grad mode, graph nodes, recording an op's backward
#include "cohort/autograd/engine.h"
#include "cohort/autograd/function.h"
#include "cohort/autograd/gradient_hook.h"
#include "cohort/autograd/graph.h"
#include "cohort/autograd/grad_mode.h"
#include "cohort/autograd/node.h"
#include "cohort/autograd/record.h"
#include "cohort/autograd/trace.h"

// nn: modules, layers, losses and their functional forms
#include "cohort/nn/activation.h"
#include "cohort/nn/attention.h"
#include "cohort/nn/basic.h"
#include "cohort/nn/batchnorm.h"
#include "cohort/nn/container.h"
#include "cohort/nn/conv.h"
#include "cohort/nn/distance.h"
#include "cohort/nn/dropout_nd.h"
#include "cohort/nn/embedding.h"
#include "cohort/nn/fold.h"
#include "cohort/nn/functional/activation.h"
#include "cohort/nn/functional/batchnorm.h"
#include "cohort/nn/functional/conv.h"
#include "cohort/nn/functional/distance.h"
#include "cohort/nn/functional/dropout_nd.h"
#include "cohort/nn/functional/fold.h"
#include "cohort/nn/functional/loss.h"
#include "cohort/nn/functional/normalization.h"
#include "cohort/nn/functional/padding.h"
#include "cohort/nn/functional/pooling.h"
#include "cohort/nn/functional/vision.h"
#include "cohort/nn/init.h"
#include "cohort/nn/linear.h"
#include "cohort/nn/loss.h"
#include "cohort/nn/module.h"
#include "cohort/nn/module_holder.h"
#include "cohort/nn/normalization.h"
#include "cohort/nn/padding.h"
#include "cohort/nn/pooling.h"
#include "cohort/nn/rnn.h"
#include "cohort/nn/transformer.h"
#include "cohort/nn/transformer_decoder.h"
#include "cohort/nn/transformer_encoder.h"
#include "cohort/nn/vision.h"
#include "cohort/nn/utils.h"
#include "cohort/nn/utils/rnn.h"

// profiler: where the time goes (torch.profiler)
#include "cohort/profiler/profiler.h"

// utils: activation checkpointing (torch.utils.checkpoint)
#include "cohort/utils/checkpoint.h"

// optim: optimizers, learning-rate schedulers, gradient accumulation
#include "cohort/optim/accumulate.h"
#include "cohort/optim/adadelta.h"
#include "cohort/optim/adagrad.h"
#include "cohort/optim/adam.h"
#include "cohort/optim/adamax.h"
#include "cohort/optim/averaged_model.h"
#include "cohort/optim/cosine_annealing_warm_restarts.h"
#include "cohort/optim/grad_scaler.h"
#include "cohort/optim/lambda_lr.h"
#include "cohort/optim/lbfgs.h"
#include "cohort/optim/lr_scheduler.h"
#include "cohort/optim/nadam.h"
#include "cohort/optim/optimizer.h"
#include "cohort/optim/radam.h"
#include "cohort/optim/reduce_on_plateau_scheduler.h"
#include "cohort/optim/rmsprop.h"
#include "cohort/optim/sequential_lr.h"
#include "cohort/optim/sgd.h"

// data: datasets, samplers, transforms, the data loader
#include "cohort/data/batch_dataset.h"
#include "cohort/data/batch_pipeline.h"
#include "cohort/data/batch_transforms.h"
#include "cohort/data/cifar10.h"
#include "cohort/data/csv.h"
#include "cohort/data/dataloader.h"
#include "cohort/data/dataloader_options.h"
#include "cohort/data/dataset.h"
#include "cohort/data/example.h"
#include "cohort/data/image_folder.h"
#include "cohort/data/image_grid.h"
#include "cohort/data/iterator.h"
#include "cohort/data/map_dataset.h"
#include "cohort/data/mnist.h"
#include "cohort/data/sampler.h"
#include "cohort/data/samplers.h"
#include "cohort/data/stack.h"
#include "cohort/data/stateless_dataloader.h"
#include "cohort/data/subset.h"
#include "cohort/data/tensor_dataset.h"
#include "cohort/data/text.h"
#include "cohort/data/transforms.h"

// parallel: DataParallel over the CPU devices, and its steps (plan, scatter, replicate, apply, gather)
#include "cohort/parallel/data_parallel.h"
#include "cohort/parallel/gather.h"
#include "cohort/parallel/markers.h"
#include "cohort/parallel/parallel_apply.h"
#include "cohort/parallel/plan.h"
#include "cohort/parallel/replicate.h"
#include "cohort/parallel/scatter.h"

// distributed: process groups and DistributedDataParallel across processes
#include "cohort/distributed/checkpoint.h"
#include "cohort/distributed/ddp.h"
#include "cohort/distributed/init.h"
#include "cohort/distributed/process_group.h"
#include "cohort/distributed/uneven.h"

// io: torch::save / torch::load in PyTorch's own format, checkpoints, safetensors, .npy, PNG, atomic file writes
#include "cohort/io/checkpoint.h"
#include "cohort/io/file.h"
#include "cohort/io/image.h"
#include "cohort/io/image_decode.h"
#include "cohort/io/npy.h"
#include "cohort/io/onnx.h"
#include "cohort/io/safetensors.h"
#include "cohort/io/serialize.h"
#include "cohort/io/torch_file.h"

// models: LeNet, the blitz CNN, an MLP, ResNet
#include "cohort/models/blitz_cnn.h"
#include "cohort/models/lenet.h"
#include "cohort/models/mlp.h"
#include "cohort/models/model.h"
#include "cohort/models/resnet.h"

#endif  // C++17 or later
