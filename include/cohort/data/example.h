// One sample: data and target, libtorch's torch::data::Example.
//
//   data::Example<> e{image, label};            // Example<Tensor, Tensor>: e.data, e.target
//   data::TensorExample x = tensor;             // no target: Example<Tensor, example::NoTarget>
//
// Both loaders use it: cohort's IndexedDataset::get returns an Example<>, and libtorch's
// datasets::Dataset<Self> returns its ExampleType (Example<> unless the subclass says otherwise).
#pragma once

#include <utility>

#include "cohort/core/tensor.h"

namespace cohort::data {

template <typename Data = Tensor, typename Target = Tensor>
struct Example {
  using DataType = Data;
  using TargetType = Target;

  Example() = default;
  Example(Data data, Target target) : data(std::move(data)), target(std::move(target)) {}

  Data data;
  Target target;
};

namespace example {
// The Target of an example that has none (libtorch's spelling).
using NoTarget = void;
}  // namespace example

// An example without a target: converts to and from its data.
template <typename Data>
struct Example<Data, example::NoTarget> {
  using DataType = Data;
  using TargetType = example::NoTarget;

  Example() = default;
  Example(Data data) : data(std::move(data)) {}  // NOLINT: implicit, as in libtorch

  operator Data&() { return data; }  // NOLINT
  operator const Data&() const { return data; }  // NOLINT

  Data data;
};

using TensorExample = Example<Tensor, example::NoTarget>;

}  // namespace cohort::data
