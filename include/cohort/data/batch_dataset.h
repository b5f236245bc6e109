// libtorch's dataset templates: what a libtorch program subclasses and hands to make_data_loader.
//
//   struct Squares : data::Dataset<Squares> {          // data::datasets::Dataset, libtorch's CRTP base
//     data::Example<> get(size_t i) override { return {torch::full({2}, double(i)), torch::tensor(int64_t(i * i))}; }
//     optional<size_t> size() const override { return 10; }
//   };
//   auto ds = Squares().map(data::transforms::Stack<>());   // MapDataset: get_batch gives one Example<>
//
// BatchDataset<Self, Batch, BatchRequest> is the root: get_batch(request) -> Batch and size() (nullopt
// when unknown). Dataset<Self, SingleExample> implements get_batch by calling get(i) for each index.
// map(transform) wraps a copy (or, on an rvalue, the dataset itself) in a MapDataset whose batches
// are transform.apply_batch(dataset.get_batch(request)); maps chain. These are templates, as in
// libtorch, and unrelated to cohort's own IndexedDataset (data/dataset.h), which DataLoader takes.
//
// make_data_loader copies the dataset once per worker (libtorch does too), so get() may keep
// per-copy state without locks; the copies are made when the loader is built.
#pragma once

#include <cstddef>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "cohort/core/array_ref.h"
#include "cohort/core/optional.h"
#include "cohort/core/tensor.h"
#include "cohort/data/example.h"

namespace cohort::data::datasets {

template <typename SourceDataset, typename AppliedTransform>
class MapDataset;
template <typename DatasetType, typename TransformType>
MapDataset<DatasetType, TransformType> map(DatasetType dataset, TransformType transform);

namespace detail {
template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};
}  // namespace detail

template <typename Self, typename Batch = std::vector<Example<>>, typename BatchRequest = ArrayRef<size_t>>
class BatchDataset {
 public:
  using SelfType = Self;
  using BatchType = Batch;
  using BatchRequestType = BatchRequest;
  // A dataset whose get_batch returns optional batches (libtorch's stateful datasets) says when it
  // is exhausted itself; make_data_loader takes only datasets that are not stateful.
  static constexpr bool is_stateful = detail::is_optional<BatchType>::value;

  virtual ~BatchDataset() = default;
  virtual Batch get_batch(BatchRequest request) = 0;
  virtual optional<size_t> size() const = 0;

  template <typename TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) & {
    return datasets::map(static_cast<Self&>(*this), std::move(transform));
  }
  template <typename TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) && {
    return datasets::map(std::move(static_cast<Self&>(*this)), std::move(transform));
  }
};

template <typename Self, typename SingleExample = Example<>>
class Dataset : public BatchDataset<Self, std::vector<SingleExample>> {
 public:
  using ExampleType = SingleExample;

  virtual ExampleType get(size_t index) = 0;

  std::vector<ExampleType> get_batch(ArrayRef<size_t> indices) override {
    std::vector<ExampleType> batch;
    batch.reserve(indices.size());
    for (const size_t i : indices) batch.push_back(get(i));
    return batch;
  }
};

// A dataset asked for a number of examples rather than for indices.
template <typename Self, typename Batch = std::vector<Example<>>>
using StreamDataset = BatchDataset<Self, Batch, /*BatchRequest=*/size_t>;

}  // namespace cohort::data::datasets

namespace cohort::data {
// libtorch exports both into torch::data (programs write torch::data::Dataset<Self>).
using datasets::BatchDataset;
using datasets::Dataset;
}  // namespace cohort::data

// .map() returns a MapDataset: whoever can call it can name its result.
#include "cohort/data/map_dataset.h"  // NOLINT(build/include_order)
