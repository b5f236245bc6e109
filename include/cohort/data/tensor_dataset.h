// libtorch's TensorDataset (torch::data::datasets::TensorDataset): the rows of one tensor, as
// TensorExamples (no target). cohort's two-tensor data::TensorDataset (data/dataset.h) is another class.
//   auto loader = data::make_data_loader(data::datasets::TensorDataset(x).map(data::transforms::Stack<data::TensorExample>()), 4);
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "cohort/core/optional.h"
#include "cohort/core/tensor.h"
#include "cohort/data/batch_dataset.h"
#include "cohort/ops/shape.h"

namespace cohort::data::datasets {

struct TensorDataset : public Dataset<TensorDataset, TensorExample> {
  // The tensors stacked along a new first dimension (stack's error when their shapes differ).
  explicit TensorDataset(const std::vector<Tensor>& tensors) : TensorDataset(cohort::stack(tensors)) {}
  explicit TensorDataset(Tensor tensor) : tensor(std::move(tensor)) {}

  // Row `index` (cohort::IndexError outside [0, size())).
  TensorExample get(size_t index) override { return tensor[static_cast<int64_t>(index)]; }
  optional<size_t> size() const override { return static_cast<size_t>(tensor.size(0)); }

  Tensor tensor;
};

}  // namespace cohort::data::datasets
